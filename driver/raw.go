package driver

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/flagos-ai/flagshim/internal/dl"
)

// The raw layer: one address per operation, resolved once when the library
// is opened. raw.go and calls.go are the only files of the package that call
// purego or hold a symbol's address; everything above them calls the
// checked methods of *api.

// api is an opened driver library: its resolved symbols and the checked
// calls over them (calls.go).
type api struct {
	v      *Vendor
	lib    *dl.Library
	addr   [numOps]uintptr // 0: the library lacks the operation
	name   [numOps]string  // the name found, "" when absent
	narrow [numOps]bool    // found under a 32-bit legacy name
}

// MissingSymbolError says which required function a library lacks.
type MissingSymbolError struct {
	Library string   // the path
	Op      Op       // the operation
	Names   []string // the names tried
	Err     error    // the loader's error; matches ErrMissingSymbol
}

func (e *MissingSymbolError) Error() string {
	return fmt.Sprintf("%s lacks the required symbol %s; it is too old or not this vendor's driver library",
		e.Library, strings.Join(e.Names, " / "))
}

func (e *MissingSymbolError) Unwrap() error { return e.Err }

// resolve looks every operation of v up in lib; a missing required one is
// a *MissingSymbolError.
func resolve(v *Vendor, lib *dl.Library) (*api, error) {
	a := &api{v: v, lib: lib}
	required := map[Op]bool{}
	for _, op := range requiredOps(v.Context) {
		required[op] = true
	}
	for op := Op(0); op < numOps; op++ {
		names := v.Symbols[op]
		if len(names) == 0 {
			continue
		}
		addr, found, err := lib.SymAny(names...)
		if err != nil {
			if required[op] {
				return nil, &MissingSymbolError{Library: lib.Path, Op: op, Names: names, Err: err}
			}
			continue
		}
		a.addr[op], a.name[op], a.narrow[op] = addr, found, v.narrow(found)
	}
	return a, nil
}

// has reports whether the library has every one of ops.
func (a *api) has(ops ...Op) bool {
	for _, op := range ops {
		if a.addr[op] == 0 {
			return false
		}
	}
	return true
}

// missing names the operations of ops the library lacks.
func (a *api) missing(ops ...Op) []string {
	var names []string
	for _, op := range ops {
		if a.addr[op] == 0 {
			names = append(names, symName(a.v, op))
		}
	}
	return names
}

// sym names op for messages: the name found, else the vendor's first name.
func (a *api) sym(op Op) string {
	if a != nil && a.name[op] != "" {
		return a.name[op]
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

// code truncates a return register to the C enum's 32 bits: the upper half
// of the register is not defined by the ABI.
func code(r uintptr) int { return int(int32(uint32(r))) }

// callList runs op with a prebuilt list of arguments that are values
// (handles, numbers), never addresses of Go memory: no allocation. Calls
// that pass addresses of Go variables call purego.SyscallN themselves with
// uintptr(unsafe.Pointer(&x)) written in the call, so that the compiler
// keeps x alive and in place for the call (SyscallN is go:uintptrescapes);
// a helper in between would lose that guarantee.
func (a *api) callList(op Op, args []uintptr) int { return code(ccall(a.addr[op], args)) }

// ptr turns an address owned by C into a pointer without tripping go vet's
// unsafeptr check; the memory is not managed by Go.
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
