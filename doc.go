// Package flagshim lets code written for "cuda" run on the accelerator a
// machine really has.
//
// Init runs flagshim's default plan once per process, in three phases:
//
//	drivers        register the vendor backends (cuda, musa) and the virtual
//	               flagos device, with their original availability probes
//	vendor_compat  compatibility steps, which may redirect live probes
//	ecosystem      install the cuda->flagos alias (package alias), then
//	               ecosystem steps such as module hooks
//
// Plugins add steps with AddStep before Init runs. Linking this package also
// hands device.Default its initializer: the first device.Parse or
// device.Lookup runs Init, so "cuda" is never answered before the alias has
// been decided. Linking does no I/O; nothing is opened or probed before Init.
package flagshim
