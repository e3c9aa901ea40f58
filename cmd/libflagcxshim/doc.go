// Command libflagcxshim is FlagCX's device adaptor as a plugin built on
// flagshim: one C shared library that serves whichever accelerator the
// machine has, through the backend flagos routes to (FLAGOS_BACKEND, auto
// by default). Build it with cgo:
//
//	CGO_ENABLED=1 go build -buildmode=c-shared -o libflagcxshim.so ./cmd/libflagcxshim
//
// and point FlagCX at it: FLAGCX_DEVICE_ADAPTOR_PLUGIN=/abs/libflagcxshim.so
// (docs/flagcx.md). The library exports the data symbol
// flagcxDeviceAdaptorPlugin_v1, FlagCX's 416-byte v1 struct (flagcx_v1.h:
// flagshim's own declaration of it, from FlagCX's public header), named
// "flagshim:<backend>", with the 32 fields FlagCX requires and the
// optional ones it calls without a check; the fields FlagCX's built-in
// CUDA adaptor leaves NULL stay NULL.
//
// The C side (adaptor.c) keeps each thread's device, as cudaSetDevice
// does, sets host memory itself and calls FlagCX's device functions
// itself; the rest enters Go (export.go), where each field is a few calls
// of flagshim's driver core (plugin.go, memory.go, streams.go, device.go),
// except the hot fields, which call the driver functions the core resolved
// straight from C (fast.c, fast.go) and find the plugin's streams and
// events in a registry whose lookups take no lock (registry.c).
// Streams and events are C objects whose first word is the native handle;
// IPC handles are 64 flat bytes. The library is linked nodelete (Go's
// c-shared libraries always are): FlagCX's dlclose at its last handle's
// free leaves it loaded, and its next dlopen finds it as it was.
//
// Bad input (NULL pointers, a device out of range, an unknown memory type
// or copy kind, a stream, event or IPC handle the plugin did not make,
// garbage bytes as a handle) is answered flagcxInvalidArgument, a driver's
// failure flagcxUnhandledDeviceError; the reason goes to flagshim's logger
// (FLAGOS_LOG=warn) and to flagcxshim_last_error(char *out, int len).
//
// Without cgo this package builds as an empty program, so that
// CGO_ENABLED=0 go build ./... works.
package main
