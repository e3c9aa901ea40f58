// Package dl is flagshim's loader of vendor driver libraries: the candidate
// search, the safety checks, dlopen/dlsym on a locked OS thread and the log of
// every attempt.
//
// The search order is fixed (see DESIGN.md, "Loading drivers"):
//
//  1. the override variable (Spec.EnvVar). It must hold an absolute path; a
//     relative one is refused (ErrRelativeOverride) and nothing is opened. An
//     override that cannot be opened is an error: the search does not fall
//     back to other places, since the user asked for that file.
//  2. the bare sonames (Spec.Sonames), so LD_LIBRARY_PATH and ld.so.cache
//     apply. The dynamic loader picks the file; the package then asks it which
//     file it opened (dlinfo) and applies the same checks after the fact.
//  3. the well-known absolute folders (Spec.Dirs, glob patterns allowed),
//     each joined with each soname.
//
// A relative path, the working directory and anything under a "stubs" folder
// are never opened. A library file, or a folder holding it, that anyone may
// write to is refused: an override there is an error (ErrUnsafePath), a
// searched candidate there is skipped and its Attempt says why.
//
// dlopen, dlsym and dlerror run with the calling goroutine locked to its OS
// thread, since dlerror's message belongs to the thread that failed.
// Libraries are opened RTLD_NOW, so that a library with unresolved
// dependencies fails at open time with the loader's message instead of at the
// first call, and RTLD_LOCAL unless Spec.Global is set, so that a driver's
// symbols never interpose on other libraries of the process (vendor runtimes
// that need the driver dlopen it themselves by soname and get the same
// handle).
package dl
