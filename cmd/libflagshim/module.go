package main

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Modules that other loaders of the host loaded (Triton, CuPy, a C++
// runtime) get flagshim's scoped hooks through flagshim_module_loaded and
// give them back through flagshim_module_unloading. The hooks are
// device.DefaultHooks (the NVSHMEM plugin's, once attached); each runs only
// where its scope matches the module.

type foreignKey struct {
	t device.Type
	h uintptr
}

var foreign struct {
	mu   sync.Mutex
	mods map[foreignKey]*driver.ForeignModule
}

// vendorBackend is the registered driver backend of type name, without the
// alias: the handle came from that very driver.
func vendorBackend(name string) (*driver.Backend, failure) {
	if _, err := initHost(); err != nil {
		if _, lerr := device.Lookup(device.CPU); lerr != nil {
			setErr(lerr)
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

// moduleLoaded runs the matching hooks on module h of backend name and
// returns the names of those that ran.
func moduleLoaded(name string, h uintptr, label string) ([]string, failure) {
	b, f := vendorBackend(name)
	if f != failNone {
		return nil, f
	}
	key := foreignKey{b.Type(), h}
	foreign.mu.Lock()
	if foreign.mods == nil {
		foreign.mods = map[foreignKey]*driver.ForeignModule{}
	}
	if m := foreign.mods[key]; m != nil {
		foreign.mu.Unlock()
		return device.DefaultHooks.Applied(m), failNone // said twice: nothing new runs
	}
	foreign.mu.Unlock()
	m, err := b.Adopt(h, label)
	if err != nil {
		setErr(err)
		return nil, failArgs
	}
	if err := device.DefaultHooks.Apply(m); err != nil {
		setErr(err)
		if errors.Is(err, device.ErrInvalidHook) {
			return nil, failArgs
		}
		return nil, failHook
	}
	applied := device.DefaultHooks.Applied(m)
	if len(applied) > 0 {
		foreign.mu.Lock()
		foreign.mods[key] = m
		foreign.mu.Unlock()
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
	if err := device.DefaultHooks.Release(m); err != nil {
		setErr(err)
		return failHook
	}
	return failNone
}
