//go:build cgo

package main

/*
#include <stddef.h>

extern void flagshim_note_init(void);
extern void *flagshim_answer_alloc(int len);
extern char *flagshim_answer_text(void *a);
extern void flagshim_publish_info(void *a);
*/
import "C"

import "unsafe"

// The Go side of the fork copy (entry.go). Every info answer this process
// builds (infoJSON, through onInfo) is copied into C memory and published
// there, so that a child forked afterwards answers flagshim_info_json
// from it without the Go runtime, which does not survive the fork.
// Nothing is built at the fork: the prepare handler runs under libc's
// atfork lock, where the presence probes' dlopen could hang the fork. A
// host pays for the answer where it asks for it (Python asks in its
// before-fork hook, once a call ran Init), not at its first call (issue
// 40: 3 ms of Python's first resolve on a 2-core machine went to a copy
// most hosts never use).

func init() {
	// The C side's flag: the runtime is up, the prepare handler need not
	// wait for it.
	onInit = func() { C.flagshim_note_init() }
	onInfo = publishInfo
}

// maxForkInfo bounds the copy (an answer this large would be a bug).
const maxForkInfo = 64 << 20

// publishInfo copies s into C's malloc and publishes it for forked
// children. Where malloc fails (or s is too large), the answer published
// before stays: a child answers it, or FLAGSHIM_EFORK where there is none.
// Not C.malloc, which ends the process where malloc fails.
func publishInfo(s string) {
	if len(s) > maxForkInfo {
		return
	}
	a := C.flagshim_answer_alloc(C.int(len(s)))
	if a == nil {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(C.flagshim_answer_text(a))), len(s)+1)
	copy(b, s)
	b[len(s)] = 0
	C.flagshim_publish_info(a)
}

// flagshim_go_info_builds is how many info answers this process built
// (internal: for the tests: a fork builds none).
//
//export flagshim_go_info_builds
func flagshim_go_info_builds() C.int { return C.int(infoBuilds.Load()) }
