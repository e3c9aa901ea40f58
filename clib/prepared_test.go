package clib

import (
	"os"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// A prepared call is CallAfter's (or CallList's, without pre) with its
// block built once: pre first, fn only after pre's 0, CallWith's first
// argument in place of the prepared one, nothing allocated, and traced
// like any call while a tracer is set.
func TestPrepared(t *testing.T) {
	if !StackLists {
		_, s := openLibc(t)
		assert.False(t, s.abs.Prepare(nil, 0, 1).OK(), "no trampoline here: nothing is prepared")
		return
	}
	h, s := openLibc(t)
	var labs Func
	require.NoError(t, h.Resolve("libc", []Sym{{Fn: &labs, Names: []string{"labs"}, Required: true, Sig: "i"}}))

	alone := s.abs.Prepare(nil, 0, neg(9))
	require.True(t, alone.OK())
	r0, r1 := alone.Call()
	assert.Zero(t, r0, "no pre: r0 is 0")
	assert.Equal(t, 9, Code(r1))
	_, r1 = alone.CallWith(neg(4))
	assert.Equal(t, 4, Code(r1), "CallWith's argument replaces the prepared one")

	after := s.getpid.Prepare(&s.abs, 0)
	r0, r1 = after.Call()
	assert.Equal(t, 0, Code(r0))
	assert.Equal(t, os.Getpid(), Code(r1), "fn runs after pre's 0")
	failing := s.getpid.Prepare(&s.abs, neg(5))
	r0, r1 = failing.Call()
	assert.Equal(t, 5, Code(r0), "pre's result")
	assert.Zero(t, r1, "fn does not run after pre's failure")

	// Two arguments: strnlen(s, max) after abs(0).
	b := []byte("flagshim\x00")
	var strnlen Func
	require.NoError(t, h.Resolve("libc", []Sym{{Fn: &strnlen, Names: []string{"strnlen"}, Required: true, Sig: "pu"}}))
	two := strnlen.Prepare(&s.abs, 0, 0, 3)
	_, r1 = two.CallWith(uintptr(unsafe.Pointer(&b[0])))
	assert.Equal(t, 3, Code(r1), "the prepared second argument stays")

	assert.False(t, s.abs.Prepare(nil, 0, 1, 2, 3).OK(), "more than two arguments")
	assert.False(t, s.abs.Prepare(&s.missing, 0, 1).OK(), "an unresolved pre")
	assert.False(t, s.missing.Prepare(nil, 0).OK(), "an unresolved function")

	SetTracer(nil)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { after.Call() }), "Call")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { alone.CallWith(neg(2)) }), "CallWith")

	core, logs := observer.New(zap.InfoLevel)
	SetTracer(zap.New(core))
	t.Cleanup(func() { SetTracer(nil) })
	r0, r1 = failing.Call()
	assert.Equal(t, 5, Code(r0))
	assert.Zero(t, r1)
	_, r1 = alone.CallWith(neg(6))
	assert.Equal(t, 6, Code(r1))
	entries := logs.AllUntimed()
	require.Len(t, entries, 2, "pre alone (it failed), then abs")
	assert.Equal(t, "abs", entries[0].ContextMap()["func"])
	assert.Equal(t, "-5", entries[0].ContextMap()["args"])
	assert.Equal(t, "-6", entries[1].ContextMap()["args"], "the call's own argument is traced")
}
