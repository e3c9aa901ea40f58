package clib

import (
	"bytes"

	"github.com/ebitengine/purego"

	"github.com/flagos-ai/flagshim/internal/dl"
)

// syscallN is the general call path (purego's), for Call: the addresses
// in args were kept alive by Call's caller (go:uintptrescapes).
func syscallN(fn uintptr, args []uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// MaxCString bounds GoString's scan: PATH_MAX, enough for a file name or a
// driver's message.
const MaxCString = dl.MaxCString

// GoString copies the NUL-terminated C string at p (memory owned by C: a
// driver's static strings), scanning at most max bytes and never into a
// page that cannot be read (the kernel is asked before each new page), so
// a missing terminator cannot walk off its mapping: the string is cut
// there. p == 0 gives "". A string in a buffer of known length is read with
// that length as max, or with CString.
func GoString(p uintptr, max int) string { return dl.GoString(p, max) }

// CString is the text of a NUL-terminated buffer a C function filled (all
// of it when there is no NUL).
func CString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
