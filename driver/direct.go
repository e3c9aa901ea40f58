package driver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/clib"
)

// Direct calls: for C code in this process that makes a few hot calls
// itself (the FlagCX plugin's stream, event, copy and memory fields), with
// the addresses the core resolved and checked, instead of calling into Go
// for each. The C caller does what the core's own call does: it makes the
// device current with the selection function and Selector's value, then
// calls the operation, on one thread; a result other than 0 goes back to
// DirectError for the core's words.

// ErrNoDirectCalls: an operation cannot be called directly (unresolved,
// of another shape than CUDA's, or tracing is on).
var ErrNoDirectCalls = errors.New("no direct calls")

// DirectCalls returns the address of the function that makes a device
// current (OpCtxSetCurrent, or OpSetDevice for a vendor whose selection is
// the current device; one argument: Selector's value) and of each of ops,
// when each is called in CUDA's shape: resolved, under its full-width
// name, with no vendor adapter. With tracing on (clib.Tracing) nothing is
// called directly: a direct call would not be traced.
func (b *Backend) DirectCalls(ops ...Op) (sel uintptr, fns []uintptr, err error) {
	s, _, err := b.device(0)
	if err != nil {
		return 0, nil, err
	}
	if clib.Tracing() {
		return 0, nil, fmt.Errorf("%w: %s: tracing is on", ErrNoDirectCalls, s.v.Type)
	}
	a := s.api
	var why []string
	for _, op := range append([]Op{a.selectOp()}, ops...) {
		p, no := a.directAddr(op)
		if no != "" {
			why = append(why, a.sym(op)+" "+no)
			continue
		}
		fns = append(fns, p)
	}
	if len(why) > 0 {
		return 0, nil, fmt.Errorf("%w: %s: %s", ErrNoDirectCalls, s.v.Type, strings.Join(why, "; "))
	}
	return fns[0], fns[1:], nil
}

// Selector is the one argument DirectCalls' selection function takes for
// device index: its primary context (retained on first use, as the core's
// own calls retain it), its context, or its ordinal.
func (b *Backend) Selector(index int) (uintptr, error) {
	s, d, err := b.device(index)
	if err != nil {
		return 0, err
	}
	sel, err := s.selector(d)
	if err != nil {
		return 0, err
	}
	return sel.args[0], nil
}

// NotReadyCode is the vendor's "not ready" result (600 for CUDA, HIP and
// MUSA), which the core's queries answer as device.ErrNotReady; -1 if none.
func (b *Backend) NotReadyCode() int {
	s, _, err := b.device(0)
	if err != nil {
		return -1
	}
	return s.api.notReady
}

// DirectError is the error the core's own call gives when op returned code
// on device index, or, with selecting, when making the device current
// before op did; nil for a code that means success.
func (b *Backend) DirectError(index int, op Op, code int, selecting bool) error {
	s, d, err := b.device(index)
	if err != nil {
		return err
	}
	if selecting {
		op = s.api.selectOp()
	}
	cerr := s.api.check(op, code)
	if cerr == nil {
		return nil // success: no error, not a wrapped nil
	}
	return s.opErr(op, d, cerr)
}
