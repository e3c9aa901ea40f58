package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/hooks"
)

// Modules that other loaders of the host loaded (Triton, CuPy, a C++
// runtime) get flagshim's scoped hooks through flagshim_module_loaded and
// give them back through flagshim_module_unloading. The hooks are
// hooks.DefaultHooks (the NVSHMEM plugin's, once attached); each runs only
// where its scope matches the module.
//
// A module's hooks run once per load however many threads report it:
// hooks.Hooks knows a module by its backend and handle, so concurrent
// reports wait for the one run and get its answer, and later ones run
// nothing. foreign keeps one driver.ForeignModule per module whose hooks
// are applied, so that unloading finds it without adopting the handle again
// (which would initialize the driver for nothing).

type foreignKey struct {
	t device.Type
	h uintptr
}

var foreign struct {
	mu   sync.Mutex
	mods map[foreignKey]*driver.ForeignModule
}

// adopt returns the module value of handle h: the one kept, else a new one,
// kept until it is known that no hook is applied to it.
func adopt(b *driver.Backend, key foreignKey, label string) (*driver.ForeignModule, error) {
	foreign.mu.Lock()
	m := foreign.mods[key]
	foreign.mu.Unlock()
	if m != nil {
		return m, nil
	}
	m, err := b.Adopt(key.h, label)
	if err != nil {
		return nil, err
	}
	foreign.mu.Lock()
	defer foreign.mu.Unlock()
	if kept := foreign.mods[key]; kept != nil {
		return kept, nil // another thread adopted it meanwhile
	}
	if foreign.mods == nil {
		foreign.mods = map[foreignKey]*driver.ForeignModule{}
	}
	foreign.mods[key] = m
	return m, nil
}

// forget drops m unless its hooks are applied (none matched, or the load
// failed): nothing is left to finalize.
func forget(key foreignKey, m *driver.ForeignModule) {
	if len(hooks.DefaultHooks.Applied(m)) > 0 {
		return
	}
	foreign.mu.Lock()
	if foreign.mods[key] == m {
		delete(foreign.mods, key)
	}
	foreign.mu.Unlock()
}

// vendorBackend is the registered driver backend of type name, without the
// alias: the handle came from that very driver.
func vendorBackend(name string) (*driver.Backend, failure) {
	if _, err := initHost(); err != nil {
		if _, lerr := device.Lookup(device.CPU); lerr != nil {
			setInitErr(lerr)
			return nil, failInit
		}
	}
	var names []string
	for _, b := range device.Default.Backends() {
		if string(b.Type()) == name {
			if db, ok := b.(*driver.Backend); ok {
				return db, failNone
			}
			setErr(fmt.Errorf("flagshim: backend %q does not load driver modules (it is %T)", name, b))
			return nil, failBackend
		}
		if _, ok := b.(*driver.Backend); ok {
			names = append(names, string(b.Type()))
		}
	}
	setErr(fmt.Errorf("flagshim: no driver backend %q (driver backends: %s); give the backend that loaded the module", name, strings.Join(names, ", ")))
	return nil, failBackend
}

// moduleLoaded runs the matching hooks on module h of backend name, once per
// load, and returns the names of those that ran.
func moduleLoaded(name string, h uintptr, label string) ([]string, failure) {
	b, f := vendorBackend(name)
	if f != failNone {
		return nil, f
	}
	key := foreignKey{b.Type(), h}
	m, err := adopt(b, key, label)
	if err != nil {
		setErr(err)
		return nil, failArgs
	}
	err = hooks.DefaultHooks.Apply(m) // runs them, waits for their run, or finds them applied
	applied := hooks.DefaultHooks.Applied(m)
	forget(key, m)
	if err != nil {
		setErr(err)
		if errors.Is(err, hooks.ErrInvalidHook) {
			return nil, failArgs
		}
		return nil, failHook
	}
	return applied, failNone
}

// moduleUnloading finalizes the hooks applied to module h, in reverse.
func moduleUnloading(name string, h uintptr) failure {
	b, f := vendorBackend(name)
	if f != failNone {
		return f
	}
	key := foreignKey{b.Type(), h}
	foreign.mu.Lock()
	m := foreign.mods[key]
	delete(foreign.mods, key)
	foreign.mu.Unlock()
	if m == nil {
		return failNone // never hooked: nothing to do
	}
	if err := hooks.DefaultHooks.Release(m); err != nil {
		setErr(err)
		return failHook
	}
	return failNone
}
