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
// CallParams lays a kernel's parameters out for the call: every value in
// its slot, the array in the argument named (a register's or the C
// stack's), 0 there for no values, every other argument in place, nothing
// allocated, and a call that names more values or an argument that is not
// there refused before anything runs.
func TestCallParams(t *testing.T) {
	if !StackLists {
		t.Skip("no trampoline on this platform (StackLists false): Prepare prepares nothing, so CallParams is never reached")
	}
	s := openCallbackLib(t)
	eleven := s.params.Prepare(nil, 0)
	first := s.paramsFirst.Prepare(nil, 0)
	require.True(t, eleven.OK())
	require.True(t, first.OK())
	var full [MaxParams]uint64
	var wantFull uintptr
	for i := range full {
		full[i] = uint64(i*i + 1)
		wantFull += uintptr(i*i+1) * uintptr(i+1)
	}
	list := func(n int) *[11]uintptr { return &[11]uintptr{1, 2, 3, 4, 5, 6, 7, 8, 9, 0xdead, uintptr(n)} }
	cases := []struct {
		name string
		p    *Prepared
		args *[11]uintptr
		at   int
		n    int
		want uintptr
	}{
		{"three values, on the C stack", &eleven, list(3), 9, 3, 45 + 1*1 + 2*2 + 5*3},
		{"every value", &eleven, list(MaxParams), 9, MaxParams, 45 + wantFull},
		{"no values: a null array", &eleven, list(0), 9, 0, ^uintptr(45)}, // -1 - 45
		{"in a register", &first, &[11]uintptr{0xdead, 2}, 0, 2, 1 + 2*2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := *tc.args
			r0, r1 := tc.p.CallParams(tc.args, tc.at, &full, tc.n)
			assert.Zero(t, r0, "no pre")
			assert.Equal(t, tc.want, r1)
			assert.Equal(t, before, *tc.args, "the caller's list is left as it was")
		})
	}
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		l := [11]uintptr{1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 3}
		eleven.CallParams(&l, 9, &full, 3)
	}))
	for _, bad := range []struct {
		args  *[11]uintptr
		vals  *[MaxParams]uint64
		at, n int
	}{{list(3), &full, 9, MaxParams + 1}, {list(3), &full, 11, 3}, {list(3), &full, -1, 3}, {nil, &full, 9, 3}, {list(3), nil, 9, 3}} {
		assert.Panics(t, func() { eleven.CallParams(bad.args, bad.at, bad.vals, bad.n) }, "at %d, n %d, arguments %v, values %v", bad.at, bad.n, bad.args != nil, bad.vals != nil)
	}
}

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

	// CallArgs: the list in place of the prepared arguments, up to eleven.
	r0, r1 = two.CallArgs([]uintptr{uintptr(unsafe.Pointer(&b[0])), 5})
	assert.Equal(t, 0, Code(r0))
	assert.Equal(t, 5, Code(r1), "CallArgs's list replaces the prepared arguments")
	r0, r1 = failing.CallArgs(nil)
	assert.Equal(t, 5, Code(r0))
	assert.Zero(t, r1, "fn does not run after pre's failure")
	_, r1 = alone.CallArgs([]uintptr{neg(7)})
	assert.Equal(t, 7, Code(r1))

	assert.False(t, s.abs.Prepare(nil, 0, 1, 2, 3).OK(), "more than two arguments")
	assert.False(t, s.abs.Prepare(&s.missing, 0, 1).OK(), "an unresolved pre")
	assert.False(t, s.missing.Prepare(nil, 0).OK(), "an unresolved function")

	SetTracer(nil)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { after.Call() }), "Call")
	assert.Zero(t, testing.AllocsPerRun(1000, func() { alone.CallWith(neg(2)) }), "CallWith")
	assert.Zero(t, testing.AllocsPerRun(1000, func() {
		list := [2]uintptr{uintptr(unsafe.Pointer(&b[0])), 4}
		two.CallArgs(list[:])
	}), "CallArgs, its list on the stack")

	core, logs := observer.New(zap.InfoLevel)
	SetTracer(zap.New(core))
	t.Cleanup(func() { SetTracer(nil) })
	r0, r1 = failing.Call()
	assert.Equal(t, 5, Code(r0))
	assert.Zero(t, r1)
	_, r1 = alone.CallWith(neg(6))
	assert.Equal(t, 6, Code(r1))
	_, r1 = alone.CallArgs([]uintptr{neg(8)})
	assert.Equal(t, 8, Code(r1))
	entries := logs.AllUntimed()
	require.Len(t, entries, 3, "pre alone (it failed), then abs twice")
	assert.Equal(t, "abs", entries[0].ContextMap()["func"])
	assert.Equal(t, "-5", entries[0].ContextMap()["args"])
	assert.Equal(t, "-6", entries[1].ContextMap()["args"], "the call's own argument is traced")
	assert.Equal(t, "-8", entries[2].ContextMap()["args"], "CallArgs's list is traced")
}
