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
	for name, addr := range map[string]uintptr{"ctramp (CallList, CallThen, CallAfter, CallArgs)": ctrampABI0,
		"cprep (Prepared's Call and CallWith)": cprepABI0, "cparams (CallParams)": cparamsABI0} {
		if addr == 0 {
			t.Errorf("%s's address is 0: its calls would call nothing", name)
		}
	}
}
