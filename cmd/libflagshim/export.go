//go:build cgo

package main

/*
#define FLAGSHIM_BUILDING // the prototypes come from cgo's own _cgo_export.h
#include "flagshim.h"
*/
import "C"

import "unsafe"

var codes = [...]C.int{
	failInit:   C.FLAGSHIM_EINIT,
	failArgs:   C.FLAGSHIM_EINVAL,
	failDevice: C.FLAGSHIM_EDEVICE,
	failRange:  C.FLAGSHIM_ERANGE,
}

//export flagshim_resolve
func flagshim_resolve(device *C.char, out *C.char, out_len C.int) C.int {
	if out == nil || out_len <= 0 {
		return C.FLAGSHIM_EINVAL
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(out_len))
	if device == nil {
		buf[0] = 0
		return C.FLAGSHIM_EINVAL
	}
	s, f := resolve(C.GoString(device))
	if f != failNone {
		buf[0] = 0
		return codes[f]
	}
	n, f := put(buf, s)
	if f != failNone {
		return codes[f]
	}
	return C.int(n)
}

//export flagshim_alias_active
func flagshim_alias_active() C.int {
	active, f := aliasActive()
	if f != failNone {
		return codes[f]
	}
	if active {
		return 1
	}
	return 0
}
