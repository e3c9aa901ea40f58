// Package hooks is flagshim's module-hook engine: the scoped replacement for
// a global "after every module load" callback. A [Hook] has a unique name, a
// [Scope] (which loaded modules it applies to, usually [HasGlobals]), an
// Init and an optional Finalize; a [Hooks] registry runs the matching hooks
// on each module load, in registration order, and finalizes them in reverse
// on unload. A hook's failure or panic fails that module's load alone
// ([HookError], matching [ErrHookFailed]).
//
// Drivers call [Hooks.Apply] right after loading a module and
// [Hooks.Release] right before unloading it; a backend given no registry of
// its own uses [DefaultHooks] (driver.WithHooks, devicetest.Config.Hooks).
// The C library applies DefaultHooks to modules that other loaders loaded
// (flagshim_module_loaded).
//
// What a hook sees of a module is device.Module (its backend, driver handle,
// label and globals): the public model stays in package device, and this
// package imports it, never the other way round.
package hooks
