package nvshmem

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
)

// HookName is the name the plugin's hook registers under.
const HookName = "nvshmem"

// The globals nvshmemx_cumodule_init looks up in a module: the hook's scope.
const (
	VersionGlobal = "nvshmemi_device_lib_version_d"
	StateGlobal   = "nvshmemi_device_state_d"
)

// Scope is the hook's scope: modules holding both NVSHMEM globals. A module
// holding one without the other is an error (hooks.ErrPartialGlobals).
func Scope() hooks.Scope { return hooks.HasGlobals(VersionGlobal, StateGlobal) }

// Hook is the module hook: on modules in [Scope], Init runs
// nvshmemx_cumodule_init (only once InitUniqueID has initialized NVSHMEM,
// otherwise it fails the load with [ErrNotInitialized]) and Finalize runs
// nvshmemx_cumodule_finalize.
func (l *Lib) Hook() hooks.Hook {
	return hooks.Hook{
		Name:  HookName,
		Scope: Scope(),
		Init: func(m device.Module) error {
			return l.moduleCall("nvshmemx_cumodule_init", &l.s.cumoduleInit, m)
		},
		Finalize: func(m device.Module) error {
			return l.moduleCall("nvshmemx_cumodule_finalize", &l.s.cumoduleFinalize, m)
		},
	}
}

// Register adds [Lib.Hook] to h (hooks.DefaultHooks when nil) and returns
// its remove function. [Lib.Finalize] removes it too.
func (l *Lib) Register(h *hooks.Hooks) (remove func() error, err error) {
	if h == nil {
		h = hooks.DefaultHooks
	}
	remove, err = h.Register(l.Hook())
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.remove = append(l.remove, remove)
	l.mu.Unlock()
	return remove, nil
}
