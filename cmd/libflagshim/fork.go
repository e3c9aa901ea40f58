//go:build cgo

package main

/*
#include <stddef.h>

extern void flagshim_note_init(void);
extern void *flagshim_fork_malloc(size_t n);
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// The Go side of the fork copy (entry.go's fork handlers). What Init
// decided is fixed once it ran, so a child forked afterwards can answer
// flagshim_info_json from the parent's answer without the Go runtime: the
// prepare handler, in the parent, on the forking thread, before the fork,
// asks flagshim_go_fork_info once for that answer, which it keeps in C
// memory for the process's life. A host pays for the answer at its first
// fork, not at its first call (issue 40: 3 ms of Python's first resolve on
// a 2-core machine went to a copy most hosts never use).

func init() {
	// The C side's flag, set once Init returned: the prepare handler never
	// enters Go before (it would start Init, or wait for one in flight).
	onInit = func() { C.flagshim_note_init() }
}

// maxForkInfo bounds the copy (an answer this large would be a bug).
const maxForkInfo = 64 << 20

// forkCopies counts flagshim_go_fork_info's calls (a test reads it through
// flagshim_go_fork_copies: two forks, one copy).
var forkCopies atomic.Int32

// flagshim_go_fork_info returns the info answer for forked children in
// memory of C's malloc, NUL-terminated, its length in *length; NULL where
// there is none (Init failed, or malloc did). It reuses the last answer
// this process built (lastInfo: a host that called flagshim_info_json
// already paid for it) and builds one only where there is none.
//
//export flagshim_go_fork_info
func flagshim_go_fork_info(length *C.int) *C.char {
	forkCopies.Add(1)
	s := ""
	if p := lastInfo.Load(); p != nil {
		s = *p
	} else {
		var f failure
		if s, f = infoJSON(); f != failNone {
			return nil
		}
	}
	if len(s) > maxForkInfo {
		return nil
	}
	// Not C.malloc, which ends the process where malloc fails: the child
	// then answers FLAGSHIM_EFORK, as it did before the copy.
	p := C.flagshim_fork_malloc(C.size_t(len(s) + 1))
	if p == nil {
		return nil
	}
	b := unsafe.Slice((*byte)(p), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	*length = C.int(len(s))
	return (*C.char)(p)
}

// flagshim_go_fork_copies is how many times the fork handler asked for the
// copy (internal: for the tests).
//
//export flagshim_go_fork_copies
func flagshim_go_fork_copies() C.int { return C.int(forkCopies.Load()) }
