//go:build !amd64 && !arm64

package driver

// ipcByValue: passing a 64-byte struct by value is written for amd64 and
// arm64 only; elsewhere opening an IPC handle is not supported.
func ipcByValue(out uintptr, h *[64]byte, flags uintptr) ([]uintptr, bool) { return nil, false }
