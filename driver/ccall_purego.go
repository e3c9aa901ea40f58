//go:build !(amd64 && linux && !cgo)

package driver

import "github.com/ebitengine/purego"

// ccall calls fn through purego.SyscallN where the package has no
// trampoline of its own (see ccall_fast.go).
func ccall(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
