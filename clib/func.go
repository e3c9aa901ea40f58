package clib

import (
	"errors"
	"slices"
	"unsafe"
)

// Func is one C function of a library, resolved once. The zero Func is
// unresolved: the library lacks it (OK is false) and calling it panics, so
// callers of optional functions check OK first.
type Func struct {
	addr uintptr
	name string // the name found
	lib  string // the binding's label, for traces
	sig  string // Sym.Sig, for traces
}

// OK reports whether the function was found.
func (f *Func) OK() bool { return f != nil && f.addr != 0 }

// Name is the C name that was found ("cuMemAlloc_v2"); "" when unresolved.
func (f *Func) Name() string { return f.name }

// Addr is the function's address, 0 when unresolved: for code that hands
// it to another C function (a callback), never to call it from Go.
func (f *Func) Addr() uintptr { return f.addr }

// Bind makes f the function at addr, named name, for bindings that get an
// address some other way than dlsym (a table a library hands out).
func (f *Func) Bind(lib, name, sig string, addr uintptr) {
	*f = Func{addr: addr, name: name, lib: lib, sig: sig}
}

// Sym is one entry of a binding's table.
type Sym struct {
	Fn       *Func
	Names    []string // the C names, newest first: {"cuMemAlloc_v2", "cuMemAlloc"}
	Required bool     // the binding cannot work without it
	// Sig says, one letter per argument, what each one is, so that a
	// trace shows values and never reads memory: 'i' a signed int, 'u' an
	// unsigned integer or a size, 'h' a handle or a device address (shown
	// in hex), 'p' a pointer to data (shown as "*"). "" shows every
	// argument in hex.
	Sig string
}

// Resolve looks every entry of table up in the library, once. lib labels
// the binding in errors and traces ("cuda", "NVML"). Missing required
// entries are one *MissingSymbolError naming each; a missing optional one
// leaves its Func unresolved. A closed handle is an error.
func (h *Handle) Resolve(lib string, table []Sym) error {
	var missing [][]string
	for _, s := range table {
		*s.Fn = Func{}
		if len(s.Names) == 0 {
			continue
		}
		addr, found, err := h.lib.SymAny(s.Names...)
		if err != nil {
			if !errors.Is(err, ErrMissingSymbol) {
				return err
			}
			if s.Required {
				missing = append(missing, s.Names)
			}
			continue
		}
		*s.Fn = Func{addr: addr, name: found, lib: lib, sig: s.Sig}
	}
	if len(missing) > 0 {
		return &MissingSymbolError{Library: lib, Path: h.lib.Path, Missing: missing}
	}
	return nil
}

// Code is a C enum (or int) result: the low 32 bits of the return
// register, sign-extended; the ABI leaves the upper half undefined.
func Code(r uintptr) int { return int(int32(uint32(r))) }

// Call calls f with args, which may be values or addresses of Go
// variables written in the call as uintptr(unsafe.Pointer(&x)) (the
// compiler then keeps x alive and in place until Call returns), and
// returns the return register. It may allocate (purego's general path);
// hot paths use CallList.
//
//go:uintptrescapes
func (f *Func) Call(args ...uintptr) uintptr {
	if t := tracer.Load(); t != nil {
		return t.call(f, args, nil)
	}
	return syscallN(f.addr, args)
}

// CallCode is Call, its result read as a C enum (Code).
//
//go:uintptrescapes
func (f *Func) CallCode(args ...uintptr) int {
	if t := tracer.Load(); t != nil {
		return Code(t.call(f, args, nil))
	}
	return Code(syscallN(f.addr, args))
}

// CallList calls f with at most 11 arguments that are values or addresses
// of C memory, never of Go memory, and returns the return register. It
// allocates nothing: the hot path (a device made current, a launch).
func (f *Func) CallList(args []uintptr) uintptr {
	if tracer.Load() != nil {
		return f.callListTraced(args)
	}
	return ccall(f.addr, args)
}

// callListTraced is CallList while a tracer is set, kept out of line so
// that the untraced path stays small enough to inline into its caller.
//
// It traces a copy of args, so that args stays on its caller's stack
// (StackLists).
//
//go:noinline
func (f *Func) callListTraced(args []uintptr) uintptr {
	return tracer.Load().call(f, slices.Clone(args), nil)
}

// CallThen calls f with args (as CallList) and, when f returned 0, then
// with no arguments, both on one OS thread in one transition to C; r2 is 0
// when then did not run. A device's context made current by f is thus
// current for then without locking the goroutine to its thread.
func (f *Func) CallThen(args []uintptr, then *Func) (r1, r2 uintptr) {
	if tracer.Load() != nil {
		return f.callThenTraced(args, then)
	}
	return ccallThen(f.addr, args, then.addr)
}

//go:noinline
func (f *Func) callThenTraced(args []uintptr, then *Func) (r1, r2 uintptr) {
	return tracer.Load().callThen(f, slices.Clone(args), then)
}

// CallAfter calls pre with preArgs and, when it returned 0, f with args
// (as CallList), both on one OS thread, in one transition to C where pre
// takes at most one argument; r1 is 0 when f did not run. A device's
// context made current by pre is thus current for f (a launch) without
// locking the goroutine to its thread. Like CallList, it allocates nothing.
func (f *Func) CallAfter(pre *Func, preArgs, args []uintptr) (r0, r1 uintptr) {
	if tracer.Load() != nil {
		return f.callAfterTraced(pre, preArgs, args)
	}
	return ccallAfter(pre.addr, preArgs, f.addr, args)
}

//go:noinline
func (f *Func) callAfterTraced(pre *Func, preArgs, args []uintptr) (r0, r1 uintptr) {
	return tracer.Load().callAfter(pre, slices.Clone(preArgs), f, slices.Clone(args))
}

// Ptr turns an address owned by C into a pointer without tripping go vet's
// unsafeptr check; the memory is not managed by Go.
func Ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
