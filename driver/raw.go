package driver

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// The raw layer: one clib.Func per operation, resolved once when the
// library is opened. raw.go and calls.go are the only files of the package
// that call a C function; everything above them calls the checked methods
// of *api.

// api is an opened driver library: its resolved functions and the checked
// calls over them (calls.go).
type api struct {
	v      *Vendor
	lib    *clib.Handle
	fn     [numOps]clib.Func // unresolved (OK false): the library lacks the operation
	narrow [numOps]bool      // found under a 32-bit legacy name
	adapt  [numOps]Adapter   // Vendor.Adapters, by operation; nil: CUDA's shape
	// panics holds, by operation, the last panic of its adapter (see
	// adapted); nil: none.
	panics [numOps]atomic.Pointer[string]
	// syncContext: Synchronize waits for a context it names
	// (OpSynchronizeContext; see synchronizesContexts).
	syncContext bool
	// notReady is the vendor's "not ready" result code (600 in CUDA, HIP
	// and MUSA): the one Results maps to device.ErrNotReady; -1 if none.
	notReady int
	// sel is selectOp's answer; fused[op]: neither it nor op has an
	// adapter, so selectThen makes both calls in one transition.
	sel   Op
	fused [numOps]bool
}

// resolve looks every operation of v up in lib; a missing required one is
// a *clib.MissingSymbolError.
func resolve(v *Vendor, lib *clib.Handle) (*api, error) {
	a := &api{v: v, lib: lib}
	required := map[Op]bool{}
	for _, op := range requiredOps(v) {
		required[op] = true
	}
	table := make([]clib.Sym, 0, numOps)
	for op := Op(0); op < numOps; op++ {
		table = append(table, clib.Sym{Fn: &a.fn[op], Names: v.Symbols[op], Required: required[op], Sig: opSigs[op]})
	}
	if err := lib.Resolve(string(v.Type), table); err != nil {
		return nil, err
	}
	for op := Op(0); op < numOps; op++ {
		a.narrow[op] = a.fn[op].OK() && v.narrow(a.fn[op].Name())
		a.adapt[op] = v.Adapters[op]
	}
	a.syncContext = v.Context != CurrentDevice && a.fn[OpSynchronizeContext].OK() && a.adapt[OpSynchronizeContext] == nil
	a.notReady = -1
	for c, r := range v.Results {
		for _, e := range r.Is {
			if e == device.ErrNotReady && (a.notReady < 0 || c < a.notReady) {
				a.notReady = c
			}
		}
	}
	a.sel = OpCtxSetCurrent
	if v.Context == CurrentDevice {
		a.sel = OpSetDevice
	}
	for op := range a.fused {
		a.fused[op] = a.adapt[a.sel] == nil && a.adapt[op] == nil
	}
	return a, nil
}

// call runs op with CUDA's arguments, through the vendor's adapter where
// its function has another shape, and returns the C result. Arguments may
// be addresses of Go variables written in the call as
// uintptr(unsafe.Pointer(&x)): they stay alive and in place until call
// returns (go:uintptrescapes), the adapter's call included.
//
//go:uintptrescapes
func (a *api) call(op Op, args ...uintptr) int {
	if ad := a.adapt[op]; ad != nil {
		return a.adapted(op, ad, args)
	}
	return a.fn[op].CallCode(args...)
}

// codePanic is the result of an adapter that panicked (adapted): check
// turns it into an error matching ErrPanic and device.ErrNotAvailable.
const codePanic = math.MinInt32

// adapted calls the vendor's adapter for op, recovering a panic: the
// vendor's code never takes the host down. The call's result is then
// codePanic, and the panic's message is kept for check.
func (a *api) adapted(op Op, ad Adapter, args []uintptr) (code int) {
	defer func() {
		if r := recover(); r != nil {
			msg := fmt.Sprint(r)
			a.panics[op].Store(&msg)
			code = codePanic
		}
	}()
	return ad(&a.fn[op], args...)
}

// panicked is the error of op's adapter's last panic; nil when it never
// panicked.
func (a *api) panicked(op Op) error {
	msg := a.panics[op].Load()
	if msg == nil {
		return nil
	}
	return &unavailable{reason: fmt.Sprintf("%s: the vendor's adapter for %s panicked: %s", a.v.Type, a.sym(op), *msg), cause: ErrPanic}
}

// has reports whether the library has every one of ops.
func (a *api) has(ops ...Op) bool {
	for _, op := range ops {
		if !a.fn[op].OK() {
			return false
		}
	}
	return true
}

// missing names the operations of ops the library lacks.
func (a *api) missing(ops ...Op) []string {
	var names []string
	for _, op := range ops {
		if !a.fn[op].OK() {
			names = append(names, symName(a.v, op))
		}
	}
	return names
}

// sym names op for messages: the name found, else the vendor's first name.
func (a *api) sym(op Op) string {
	if a != nil && a.fn[op].Name() != "" {
		return a.fn[op].Name()
	}
	return symName(a.vendor(), op)
}

func (a *api) vendor() *Vendor {
	if a == nil {
		return nil
	}
	return a.v
}

// symName is the vendor's preferred name of op, or the op's own name.
func symName(v *Vendor, op Op) string {
	if v != nil && len(v.Symbols[op]) > 0 {
		return v.Symbols[op][0]
	}
	return op.String()
}

// callList runs op with a prebuilt list of arguments that are values
// (handles, numbers), never addresses of Go memory: no allocation. Calls
// that pass addresses of Go variables use Func.CallCode with
// uintptr(unsafe.Pointer(&x)) written in the call, so that the compiler
// keeps x alive and in place for the call (CallCode is go:uintptrescapes);
// a helper in between would lose that guarantee.
func (a *api) callList(op Op, args []uintptr) int {
	if ad := a.adapt[op]; ad != nil {
		return a.adapted(op, ad, args)
	}
	return clib.Code(a.fn[op].CallList(args))
}

// directAddr is op's address for a caller that calls it itself in CUDA's
// shape (Backend.DirectCalls), or why it cannot: "is missing", "has the
// vendor's own shape (an adapter)", "is a 32-bit legacy function".
func (a *api) directAddr(op Op) (uintptr, string) {
	switch {
	case !a.fn[op].OK():
		return 0, "is missing"
	case a.adapt[op] != nil:
		return 0, "has the vendor's own shape (an adapter)"
	case a.narrow[op]:
		return 0, "is a 32-bit legacy function"
	}
	return a.fn[op].Addr(), ""
}
