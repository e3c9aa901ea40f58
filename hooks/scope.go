package hooks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/device"
)

// Scope decides whether a hook applies to a loaded module. An error means the
// scope cannot decide; it fails that module's load, as a failing Init does.
type Scope func(device.Module) (bool, error)

// ErrPartialGlobals is wrapped by the error of a [HasGlobals] scope when a
// module holds some of the names but not all of them.
var ErrPartialGlobals = errors.New("hooks: module holds only some of a hook's globals")

// AnyModule is a scope that matches every module.
func AnyModule() Scope {
	return func(device.Module) (bool, error) { return true, nil }
}

// OnBackend is a scope that matches the modules loaded by backend t.
func OnBackend(t device.Type) Scope {
	return func(m device.Module) (bool, error) { return m.Backend() == t, nil }
}

// AllOf is a scope that matches when every scope matches. It asks them in
// order and stops at the first that says no or fails.
func AllOf(scopes ...Scope) Scope {
	return func(m device.Module) (bool, error) {
		for _, s := range scopes {
			ok, err := s(m)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	}
}

// HasGlobals is a scope that matches modules holding every one of the named
// globals, and not those holding none of them. A module holding some but not
// all is an error (wrapping [ErrPartialGlobals]) naming the present and the
// missing ones: such a module was built against a library in a way the hook
// cannot serve, and silently skipping it would leave it uninitialised.
// A failing lookup is an error too. With no names the scope always fails.
//
// This is NVSHMEM's rule: nvshmemx_cumodule_init needs both
// nvshmemi_device_lib_version_d and nvshmemi_device_state_d.
func HasGlobals(names ...string) Scope {
	names = append([]string(nil), names...)
	return func(m device.Module) (bool, error) {
		if len(names) == 0 {
			return false, fmt.Errorf("%w: HasGlobals needs at least one name", ErrInvalidHook)
		}
		var present, missing []string
		for _, n := range names {
			_, _, ok, err := m.Global(n)
			if err != nil {
				return false, fmt.Errorf("looking up global %q in module %s: %w", n, m.Label(), err)
			}
			if ok {
				present = append(present, n)
			} else {
				missing = append(missing, n)
			}
		}
		switch {
		case len(missing) == 0:
			return true, nil
		case len(present) == 0:
			return false, nil
		}
		return false, fmt.Errorf("%w: module %s has %s but lacks %s",
			ErrPartialGlobals, m.Label(), strings.Join(present, ", "), strings.Join(missing, ", "))
	}
}
