package driver

import "unsafe"

// ipcByValue is the argument list of f(void *out, struct { char b[64]; }
// h, unsigned flags) for purego's SyscallN on amd64 (System V): a struct
// of more than 16 bytes is passed in memory, on the stack, so out and flags
// take the first two integer registers, the four others are unused, and the
// handle's eight words follow as stack arguments, in order.
func ipcByValue(out uintptr, h *[64]byte, flags uintptr) ([]uintptr, bool) {
	args := make([]uintptr, 0, 14)
	args = append(args, out, flags, 0, 0, 0, 0)
	for i := 0; i < 8; i++ {
		args = append(args, uintptr(*(*uint64)(unsafe.Pointer(&h[8*i]))))
	}
	return args, true
}
