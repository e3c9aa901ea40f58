// Package flagshim lets code written for "cuda" run on the accelerator a
// machine really has.
//
// Init runs flagshim's default plan once per process, in three phases:
//
//	drivers        register the backend of each vendor of the registry
//	               (package drivers) and the virtual flagos device, with
//	               their original availability probes
//	vendor_compat  compatibility steps, which may redirect live probes
//	ecosystem      install the cuda->flagos alias (package alias), then
//	               ecosystem steps such as module hooks
//
// Plugins add steps with AddStep before Init runs. Linking this package also
// hands device.Default its initializer: the first reader of device.Default
// (Parse, Lookup, Types, Backends) runs Init, so "cuda" is never answered
// before the alias has been decided. Linking does no I/O; nothing is opened
// or probed before Init.
//
// # First questions
//
// Which devices are here? Range over device.Default.Backends() and ask each
// for its DeviceCount (see Example_listDevices), or run `flagshim list`.
//
// Does cuda mean flagos here, and why? Init's Report.Alias says: Active,
// and Reason, one sentence of at most 300 bytes (alias.ReasonMax) that
// quotes the first clause of the probes' answers (no usable CUDA runtime and
// a flagos device present, or why not); the probes keep their whole answers. `flagshim explain`
// prints every fact behind it. FLAGOS_ALIAS_CUDA=0 keeps cuda failing.
//
// How is a driver asked? By the probe tier, FLAGOS_PROBE or WithProbe:
// exact (the default here: the driver is initialized in this process),
// presence (the management library and device nodes, no driver init, safe
// before a fork) or isolated (the exact answer, computed in a child
// process). Report.Probe says which answered.
//
// How do I allocate or launch through cuda? device.Lookup(device.CUDA)
// gives the backend cuda means here; device.MemoryOf, device.ComputeOf and
// device.StreamsOf give its capabilities, whichever vendor serves them.
//
// docs/architecture.md in the repository is the map of the packages.
package flagshim
