//go:build amd64 && linux && !purego

package clib

import "testing"

// On linux/amd64, with cgo or without, the hot calls take this package's
// own trampoline; only the build tag purego brings purego's general path
// back. This file's constraint says so independently of ccall_fast.go's:
// should that one narrow again (it once left out builds with cgo, whose hot
// calls then cost twice as much), this file no longer compiles where it
// should, and the test run fails.
func TestHotCallsTakeTheTrampoline(t *testing.T) {
	if ctrampABI0 == 0 {
		t.Fatal("the trampoline's address is 0: CallList, CallThen and CallAfter would call nothing")
	}
}
