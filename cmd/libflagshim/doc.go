// Command libflagshim is flagshim as a C shared library, for hosts that are
// not written in Go. Build it with cgo:
//
//	CGO_ENABLED=1 go build -buildmode=c-shared -o libflagshim.so ./cmd/libflagshim
//
// and include flagshim.h from this folder: it is the contract (every
// function, its error codes, the fork rule, the ABI version and what a host
// may rely on across versions). The header go build writes next to the
// library declares only the internal Go sides (flagshim_go_*), which are
// not part of the ABI.
//
// The public functions are C (entry.go): each calls its Go side (export.go)
// unless the process is the child of a fork, where it returns
// FLAGSHIM_EFORK without entering the Go runtime, which does not survive
// fork(); flagshim_info_json answers there the last info answer the
// parent built (fork.go, ABI 1.3). flagshim_abi_version is a C constant. The first call of a
// function that needs an answer runs flagshim.Init (the presence tier by
// default, no child processes); later calls reuse its outcome. Every
// function may be called from any thread, concurrently.
//
// flagshim_info_json gives report.Info, the object of `flagshim info
// --json`, whose verdict names the tier that answered and who chose it (this
// library's default, presence, or FLAGOS_PROBE): the CLI's default is
// isolated. A bad setting is FLAGSHIM_EINIT, and flagshim_error says it as
// every host does ("invalid setting: NAME=...", report.Settings).
//
// Without cgo this package builds as an empty program, so that
// CGO_ENABLED=0 go build ./... works.
package main
