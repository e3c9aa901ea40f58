// Package clib is flagshim's one way to call a C library without cgo, the
// binding kit every binding is written with: a vendor's driver API
// (package driver), its management library (NVML, MTML, ...), NVSHMEM.
// It has four parts, each small:
//
//  1. Where the library is: a [Library] names it, its override variable,
//     its sonames and its well-known folders. [Library.Open] finds, checks
//     and opens it (the checks of docs/security.md: nothing others can
//     write, never a bare name, an ELF of this machine), keeping every
//     attempt for the report; [Library.Find] finds and checks without
//     opening; [Loaded] attaches to a copy the host already loaded.
//  2. What the binding needs: a table of [Sym] entries, each a [Func] with
//     its C names, the newest first ("nvmlInit_v2", then "nvmlInit"), and
//     whether the binding is useless without it. [Handle.Resolve] looks
//     every entry up once; a missing required one is a
//     [*MissingSymbolError] naming it, a missing optional one leaves its
//     Func unresolved (Func.OK is false) so its feature alone is off.
//  3. The call: [Func.Call] for arguments that may be addresses of Go
//     variables, [Func.CallList] for prebuilt lists of values on hot paths
//     (no allocation; on linux/amd64, with cgo or without, a trampoline of
//     this package's own instead of purego's general path, which the build
//     tag purego brings back), [Func.CallThen]
//     for two calls on one OS thread in one transition to C; a
//     [Prepared] call, built once for a handle's hot call, takes a
//     trampoline that moves its five words alone, and
//     [Prepared.CallParams] lays a kernel's parameters out on the system
//     stack. [Code] reads a C enum result: 32 bits, whatever the upper
//     half of the register.
//  4. The result: [Error] is "library L's function F returned code N
//     (NAME): message", built by [NewError] or a library's [Codes], and
//     matches with errors.Is the sentinels the binding gives its code
//     (device.ErrOutOfMemory for CUDA_ERROR_OUT_OF_MEMORY).
//
// Tracing: with [SetTracer], every call made through a Func is logged
// (library, function, the arguments that are not pointers to data, the
// result and the duration); without it a call pays one atomic load.
// flagshim turns it on with FLAGOS_TRACE=1.
//
// A binding keeps its Funcs in a struct and its table beside the header's
// prototypes it was written from, with the header's name and version in a
// comment: a wrong signature crashes the process that calls it.
package clib
