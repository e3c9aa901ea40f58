//go:build cgo

package main

/*
#define FLAGSHIM_BUILDING // the codes only: the public functions are entry.go's
#include "flagshim.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// The functions of this file are the Go side of flagshim.h's functions:
// flagshim_go_NAME serves flagshim_NAME, whose C definition (entry.go)
// answers FLAGSHIM_EFORK in the child of a fork instead of calling here, so
// that such a child never enters the Go runtime. They are exported from the
// library because cgo exports them; they are not part of its ABI.

var codes = [...]C.int{
	failInit:    C.FLAGSHIM_EINIT,
	failArgs:    C.FLAGSHIM_EINVAL,
	failDevice:  C.FLAGSHIM_EDEVICE,
	failRange:   C.FLAGSHIM_ERANGE,
	failHook:    C.FLAGSHIM_EHOOK,
	failBackend: C.FLAGSHIM_EBACKEND,
	failNVSHMEM: C.FLAGSHIM_ENVSHMEM,
	failNoDev:   C.FLAGSHIM_ENODEV,
	failSelect:  C.FLAGSHIM_ESELECT,
}

// buffer is out as a Go slice, or nil when it cannot hold anything.
func buffer(out *C.char, outLen C.int) []byte {
	if out == nil || outLen <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(out)), int(outLen))
}

// answer writes s to out; its length, or a code (with its message for
// flagshim_error: the size the answer needs).
func answer(out *C.char, outLen C.int, s string) C.int {
	n, f := put(buffer(out, outLen), s)
	if f == failRange {
		setErr(fmt.Errorf("the answer needs %d bytes with its NUL and out_len is %d: call again with a larger buffer (out == NULL, out_len == 0 asks for the length where the function allows it)", len(s)+1, int(outLen)))
	}
	if f != failNone {
		return codes[f]
	}
	return C.int(n)
}

// invalid records why the arguments were refused and returns EINVAL.
func invalid(fn, why string) C.int {
	setErr(fmt.Errorf("%s: %s", fn, why))
	return C.FLAGSHIM_EINVAL
}

// fail writes an empty string to a usable out and returns f's code.
func fail(out *C.char, outLen C.int, f failure) C.int {
	if b := buffer(out, outLen); b != nil {
		b[0] = 0
	}
	return codes[f]
}

//export flagshim_go_ready
func flagshim_go_ready() C.int { return 0 }

//export flagshim_go_resolve
func flagshim_go_resolve(device *C.char, out *C.char, out_len C.int) C.int {
	if buffer(out, out_len) == nil {
		return invalid("flagshim_resolve", "out is NULL or out_len <= 0: pass a buffer (64 bytes hold any answer)")
	}
	if device == nil {
		invalid("flagshim_resolve", "device is NULL")
		return fail(out, out_len, failArgs)
	}
	s, f := resolve(C.GoString(device))
	if f != failNone {
		return fail(out, out_len, f)
	}
	return answer(out, out_len, s)
}

//export flagshim_go_alias_active
func flagshim_go_alias_active() C.int {
	active, f := aliasActive()
	if f != failNone {
		return codes[f]
	}
	if active {
		return 1
	}
	return 0
}

//export flagshim_go_info_json
func flagshim_go_info_json(out *C.char, out_len C.int) C.int {
	s, f := infoJSON()
	if f != failNone {
		return fail(out, out_len, f)
	}
	if out == nil && out_len == 0 {
		return C.int(len(s)) // the size needed, without the NUL
	}
	if buffer(out, out_len) == nil {
		return invalid("flagshim_info_json", "out is NULL or out_len <= 0 (out == NULL with out_len == 0 asks for the length)")
	}
	return answer(out, out_len, s)
}

//export flagshim_go_select_json
func flagshim_go_select_json(typ, devices *C.char, out *C.char, out_len C.int) C.int {
	if typ == nil || devices == nil {
		invalid("flagshim_select_json", "type or devices is NULL")
		return fail(out, out_len, failArgs)
	}
	s, f := selectJSON(C.GoString(typ), C.GoString(devices))
	if f != failNone {
		return fail(out, out_len, f)
	}
	if out == nil && out_len == 0 {
		return C.int(len(s))
	}
	if buffer(out, out_len) == nil {
		return invalid("flagshim_select_json", "out is NULL or out_len <= 0 (out == NULL with out_len == 0 asks for the length)")
	}
	return answer(out, out_len, s)
}

//export flagshim_go_error
func flagshim_go_error(out *C.char, out_len C.int) C.int {
	s := errorMessage()
	if out == nil && out_len == 0 {
		return C.int(len(s))
	}
	if buffer(out, out_len) == nil {
		return C.FLAGSHIM_EINVAL
	}
	if n, f := put(buffer(out, out_len), s); f == failNone {
		return C.int(n)
	}
	// Too long: the beginning of it, cut to fit, rather than nothing.
	b := buffer(out, out_len)
	n := copy(b[:len(b)-1], s)
	b[n] = 0
	return C.int(n)
}

//export flagshim_go_module_loaded
func flagshim_go_module_loaded(backend *C.char, module C.ulonglong, out *C.char, out_len C.int) C.int {
	if backend == nil || module == 0 {
		invalid("flagshim_module_loaded", "backend is NULL or module is 0")
		return fail(out, out_len, failArgs)
	}
	names, f := moduleLoaded(C.GoString(backend), uintptr(module), "")
	if f != failNone {
		return fail(out, out_len, f)
	}
	if out == nil && out_len == 0 {
		return C.int(len(strings.Join(names, ",")))
	}
	if buffer(out, out_len) == nil {
		return invalid("flagshim_module_loaded", "out is NULL or out_len <= 0 (out == NULL with out_len == 0 asks for the length)")
	}
	return answer(out, out_len, strings.Join(names, ","))
}

//export flagshim_go_module_unloading
func flagshim_go_module_unloading(backend *C.char, module C.ulonglong) C.int {
	if backend == nil || module == 0 {
		return invalid("flagshim_module_unloading", "backend is NULL or module is 0")
	}
	if f := moduleUnloading(C.GoString(backend), uintptr(module)); f != failNone {
		return codes[f]
	}
	return 0
}

//export flagshim_go_nvshmem_attach
func flagshim_go_nvshmem_attach(device C.int) C.int {
	if device < 0 {
		return invalid("flagshim_nvshmem_attach", fmt.Sprintf("device %d is negative", int(device)))
	}
	if f := nvshmemEnable(int(device), false); f != failNone {
		return codes[f]
	}
	return 0
}

//export flagshim_go_nvshmem_init
func flagshim_go_nvshmem_init(device C.int) C.int {
	if device < 0 {
		return invalid("flagshim_nvshmem_init", fmt.Sprintf("device %d is negative", int(device)))
	}
	if f := nvshmemEnable(int(device), true); f != failNone {
		return codes[f]
	}
	return 0
}

//export flagshim_go_device_json
func flagshim_go_device_json(device *C.char, out *C.char, out_len C.int) C.int {
	if device == nil {
		invalid("flagshim_device_json", "device is NULL")
		return fail(out, out_len, failArgs)
	}
	s, f := deviceJSON(C.GoString(device))
	if f != failNone {
		return fail(out, out_len, f)
	}
	if out == nil && out_len == 0 {
		return C.int(len(s))
	}
	if buffer(out, out_len) == nil {
		return invalid("flagshim_device_json", "out is NULL or out_len <= 0 (out == NULL with out_len == 0 asks for the length)")
	}
	return answer(out, out_len, s)
}

//export flagshim_go_mem_get_info
func flagshim_go_mem_get_info(device *C.char, free *C.ulonglong, total *C.ulonglong) C.int {
	if device == nil || free == nil || total == nil {
		return invalid("flagshim_mem_get_info", "device, free_bytes or total_bytes is NULL")
	}
	fr, tot, f := memGetInfo(C.GoString(device))
	if f != failNone {
		return codes[f]
	}
	*free, *total = C.ulonglong(fr), C.ulonglong(tot)
	return 0
}
