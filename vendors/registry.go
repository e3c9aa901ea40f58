package vendors

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Errors of Register; test them with errors.Is.
var (
	// ErrDuplicate: a vendor of that device type is registered already.
	ErrDuplicate = errors.New("vendors: vendor already registered")
	// ErrClosed: the registry was read already (flagshim.Init has
	// started), so a vendor registered now would be served by nothing.
	ErrClosed = errors.New("vendors: registration is closed")
	// ErrReserved: the type is flagshim's own (cpu, flagos).
	ErrReserved = errors.New("vendors: reserved device type")
	// ErrOwnedVariable: one of the vendor's variables is flagshim's own
	// (FLAGOS_PROBE, FLAGOS_BACKEND, ...: OwnedVariables) or another
	// registered vendor's, or the vendor names it twice. Such a vendor
	// would change what that variable means for every later Init.
	ErrOwnedVariable = errors.New("vendors: variable owned by flagshim or another vendor")
)

// registry is the process's: unexported, as database/sql keeps its
// drivers, so that no caller replaces or edits it.
var registry struct {
	mu     sync.Mutex
	list   []*driver.Vendor
	closed bool
	// vars indexes the registered vendors' variables by name (the first
	// to declare each), so that a registration checks its own variables
	// only: going through every registered vendor's made registering V
	// vendors quadratic.
	vars map[string]varOwner
}

// Register adds v to the vendors flagshim serves. v is read-only from now
// on. A description that fails v.Validate, cpu or flagos (ErrReserved), a
// variable flagshim or another registered vendor owns (ErrOwnedVariable),
// a type already registered (ErrDuplicate), and any call once the
// registry has been read (ErrClosed) are errors.
func Register(v *driver.Vendor) error {
	if err := v.Validate(); err != nil {
		return fmt.Errorf("vendors: %w", err)
	}
	if v.Type == device.CPU || v.Type == device.FlagOS {
		return fmt.Errorf("%w: %q is flagshim's own; give the vendor a type of its own", ErrReserved, v.Type)
	}
	if err := ownVariables(v); err != nil {
		return err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.closed {
		return fmt.Errorf("%w: vendor %q comes too late; register from the vendor package's init, before flagshim.Init or the first device.Parse/Lookup", ErrClosed, v.Type)
	}
	for _, r := range registry.list {
		if r.Type == v.Type {
			return fmt.Errorf("%w: %q", ErrDuplicate, v.Type)
		}
	}
	vars := v.Variables()
	if err := othersVariables(v, vars, registry.vars); err != nil {
		return err
	}
	if registry.vars == nil {
		registry.vars = map[string]varOwner{}
	}
	for _, x := range vars {
		if _, ok := registry.vars[x.Name]; !ok {
			registry.vars[x.Name] = varOwner{len(registry.list), v.Type, x.Kind}
		}
	}
	registry.list = append(registry.list, v)
	return nil
}

// All are the registered vendors, flagshim's own first, then others in
// registration order. Reading closes registration.
func All() []*driver.Vendor {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.closed = true
	return slices.Clone(registry.list)
}

// Lookup is the vendor of device type t.
func Lookup(t device.Type) (*driver.Vendor, bool) {
	for _, v := range All() {
		if v.Type == t {
			return v, true
		}
	}
	return nil, false
}

// AutoOrder is the preference of FLAGOS_BACKEND=auto: the vendors with an
// Auto rank, lowest first (registration order between equal ranks).
func AutoOrder() []device.Type {
	vs := All()
	var ranked []*driver.Vendor
	for _, v := range vs {
		if v.Auto > 0 {
			ranked = append(ranked, v)
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool { return ranked[i].Auto < ranked[j].Auto })
	out := make([]device.Type, 0, len(ranked))
	for _, v := range ranked {
		out = append(out, v.Type)
	}
	return out
}

// Variables are every registered vendor's variables (driver.Vendor's
// Variables), each name once, in vendor order.
func Variables() []driver.Var {
	var out []driver.Var
	seen := map[string]bool{}
	for _, v := range All() {
		for _, x := range v.Variables() {
			if !seen[x.Name] {
				seen[x.Name] = true
				out = append(out, x)
			}
		}
	}
	return out
}

// Makers names the PCI vendor ids of every registered vendor's
// accelerators: each vendor's Runtimes (their makers' names), then its
// PCIVendors (the vendor's Name). The driver core names a device by it
// (driver.WithMakers).
func Makers() map[uint16]string {
	out := map[uint16]string{}
	for _, v := range All() {
		for _, rt := range v.Runtimes {
			for _, id := range rt.PCIVendors {
				if _, ok := out[id]; !ok {
					out[id] = rt.Name
				}
			}
		}
		for _, id := range v.PCIVendors {
			if _, ok := out[id]; !ok {
				out[id] = v.Name
			}
		}
	}
	return out
}

// VendorNames is what the FlagOS projects call every maker a registered
// vendor knows, by the maker's name (Vendor.Name and each Runtime's
// Name): the driver core's device records name makers by it
// (driver.WithVendorNames). A maker named twice keeps its first names.
func VendorNames() map[string]device.VendorNames {
	out := map[string]device.VendorNames{}
	add := func(maker string, n device.VendorNames) {
		if _, ok := out[maker]; !ok && maker != "" && n.FlagOS != "" {
			out[maker] = n
		}
	}
	for _, v := range All() {
		add(v.Name, v.Names)
		for _, rt := range v.Runtimes {
			add(rt.Name, rt.Names)
		}
	}
	return out
}
