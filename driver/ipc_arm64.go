package driver

import "unsafe"

// ipcByValue is the argument list of f(void *out, struct { char b[64]; }
// h, unsigned flags) on arm64 (AAPCS64): a composite of more than 16 bytes
// is replaced by the address of a copy the caller made, so h (already a
// copy, on the heap) is passed by its address.
func ipcByValue(out uintptr, h *[64]byte, flags uintptr) ([]uintptr, bool) {
	return []uintptr{out, uintptr(unsafe.Pointer(h)), flags}, true
}
