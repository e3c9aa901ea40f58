package clib

import (
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostFunc calls the fixed trampoline as a C library would: each id
// runs its func once, a cancelled or unknown id runs nothing, a panic stays
// in Go, and every registration is gone once called or cancelled.
func TestHostFunc(t *testing.T) {
	calls := map[string]int{}
	fn, a, _ := HostFunc(func() { calls["a"]++ })
	fn2, b, cancelB := HostFunc(func() { calls["b"]++ })
	require.Equal(t, fn, fn2, "one trampoline for every func")
	_, c, _ := HostFunc(func() { panic("a host function's panic") })
	assert.Equal(t, 3, PendingHostFuncs())
	cancelB()
	for _, id := range []uintptr{a, a, b, c, 0, 1 << 40} {
		purego.SyscallN(fn, id)
	}
	assert.Equal(t, map[string]int{"a": 1}, calls)
	assert.Zero(t, PendingHostFuncs())
}
