// Package dl is flagshim's loader of vendor driver libraries: the candidate
// search, the safety checks, dlopen/dlsym on a locked OS thread and the log of
// every attempt. docs/security.md gives the threat model; docs/architecture.md
// the place of this package.
//
// Nothing is ever passed to dlopen by a bare name: the package decides which
// file the dynamic loader would pick, checks that file, and opens its
// absolute path, so a library is refused before its constructors could run.
// The search order (Open):
//
//  1. the override variable (Spec.EnvVar). It must hold an absolute path; a
//     relative one is refused (ErrRelativeOverride) and nothing is opened. An
//     override that fails a check or cannot be opened is an error: the
//     search does not fall back to other places, since the user asked for
//     that file.
//  2. for each soname of Spec.Sonames in turn, the places glibc's ld.so
//     searches for a dlopen from a program without RUNPATH: each element of
//     LD_LIBRARY_PATH (split on ':' and ';'; read through Spec.Getenv; ignored
//     in a set-user-ID or set-group-ID process), then /etc/ld.so.cache (read
//     by this package, both of ldconfig's formats, only entries for this
//     process's architecture), then the loader's default folders
//     (arch_*.go). An empty or relative LD_LIBRARY_PATH element, "." included,
//     is never searched and is logged as skipped.
//  3. the well-known absolute folders (Spec.Dirs, glob patterns allowed),
//     each joined with each soname.
//
// Every candidate that exists goes through the same checks, in order, and
// one that fails is skipped with the reason in its Attempt while the search
// goes on:
//
//   - the chain (checkChain): the file, every folder from / down to it and
//     every hop of the symbolic links on the way (followed here, one hop at a
//     time) belong to root or the effective user, and nobody else can write
//     them: not world-writable, not group-writable except by root's group or
//     the owner's private group; a sticky folder such as /tmp is accepted
//     when its next entry belongs to root or the user (ErrUnsafePath);
//   - not under a "stubs" folder (ErrStubPath);
//   - the file is a regular file holding a well-formed shared object of this
//     process's class, byte order and machine, every segment inside the
//     file (ErrBadELF): glibc dies of SIGBUS on a truncated one;
//   - dlopen of that absolute path (ErrOpen with the loader's message).
//
// The Attempt log holds every candidate with its outcome, in order; a
// soname's outcome is one Attempt whose Path is the soname and whose File is
// the file chosen. A candidate that does not exist is not logged (the
// soname's outcome says where it was looked for), except a stale ld.so.cache
// entry.
//
// Loaded attaches to a library the host program already loaded, by soname,
// through dlopen(RTLD_NOLOAD), which never loads anything; the file the
// loader names goes through the chain check.
//
// dlopen, dlsym and dlerror run with the calling goroutine locked to its OS
// thread, since dlerror's message belongs to the thread that failed.
// Libraries are opened RTLD_NOW, so that a library with unresolved
// dependencies fails at open time with the loader's message instead of at the
// first call, and RTLD_LOCAL unless Spec.Global is set, so that a driver's
// symbols never interpose on other libraries of the process. Vendor runtimes
// that dlopen the driver by soname later get the same handle: glibc matches
// the soname of an object already loaded.
package dl
