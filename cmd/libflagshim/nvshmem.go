package main

import (
	"fmt"
	"sync"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/plugins/nvshmem"
)

// The NVSHMEM plugin for C and Python hosts: attach to the NVSHMEM the host
// brought up, or bring it up for one PE, then register the plugin's scoped
// hook in hooks.DefaultHooks, which flagshim_module_loaded applies.
var nv struct {
	mu  sync.Mutex
	lib *nvshmem.Lib
}

// nvshmemEnable attaches (init false) or initializes NVSHMEM for a single PE
// on CUDA device dev, and registers the hook; a second call does nothing.
func nvshmemEnable(dev int, init bool) failure {
	b, f := vendorBackend(string(device.CUDA))
	if f != failNone {
		return f
	}
	nv.mu.Lock()
	defer nv.mu.Unlock()
	if nv.lib != nil {
		return failNone
	}
	opts := []nvshmem.Option{nvshmem.WithDevice(dev), nvshmem.WithCUDA(b)}
	var lib *nvshmem.Lib
	var err error
	if init {
		lib, err = initSingle(b, opts)
	} else {
		lib, err = nvshmem.Attach(opts...)
	}
	if err == nil {
		_, err = lib.Register(hooks.DefaultHooks)
	}
	if err != nil {
		setErr(err)
		return failNVSHMEM
	}
	nv.lib = lib
	return failNone
}

// initSingle opens NVSHMEM and initializes this process as PE 0 of 1.
func initSingle(_ *driver.Backend, opts []nvshmem.Option) (*nvshmem.Lib, error) {
	lib, err := nvshmem.Open(opts...)
	if err != nil {
		return nil, err
	}
	uid, err := lib.GetUniqueID()
	if err != nil {
		return nil, fmt.Errorf("nvshmem: the unique id of a single PE: %w", err)
	}
	if err := lib.InitUniqueID(0, 1, uid); err != nil {
		return nil, err
	}
	return lib, nil
}
