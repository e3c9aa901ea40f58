//go:build cgo

package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"os"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
)

// The Go side of adaptor.c's fields: flagcxshim_go_NAME serves FlagCX's
// field NAME (adaptor.c passes the calling thread's device where the field
// has none). Pointers arrive as unsafe.Pointer and are handed on as
// addresses of C memory. These are exported from the library because cgo
// exports them; they are not part of its ABI.

func init() {
	cAlloc = func(n uintptr) uintptr { return uintptr(C.calloc(1, C.size_t(n))) }
	cFree = func(p uintptr) { C.free(clib.Ptr(p)) }
}

func addr(p unsafe.Pointer) uintptr { return uintptr(p) }

//export flagcxshim_go_load
func flagcxshim_go_load(out *C.char, n C.int) {
	name := decideAtLoad(os.Getenv)
	loadName.Store(&name)
	putC(addr(unsafe.Pointer(out)), int(n), name)
}

//export flagcxshim_go_last_error
func flagcxshim_go_last_error(out *C.char, n C.int) C.int {
	msg := ""
	if p := lastError.Load(); p != nil {
		msg = *p
	}
	if out != nil && n > 0 {
		putC(addr(unsafe.Pointer(out)), int(n), msg)
	}
	return C.int(len(msg))
}

//export flagcxshim_go_deviceSynchronize
func flagcxshim_go_deviceSynchronize(dev C.int) C.int { return C.int(deviceSynchronize(int(dev))) }

//export flagcxshim_go_deviceMemcpy
func flagcxshim_go_deviceMemcpy(dev C.int, dst, src unsafe.Pointer, size C.size_t, kind C.int, stream unsafe.Pointer) C.int {
	return C.int(deviceMemcpy(int(dev), addr(dst), addr(src), uint64(size), int(kind), addr(stream)))
}

//export flagcxshim_go_deviceMemset
func flagcxshim_go_deviceMemset(dev C.int, ptr unsafe.Pointer, value C.int, size C.size_t, kind C.int, stream unsafe.Pointer) C.int {
	return C.int(deviceMemset(int(dev), addr(ptr), int(value), uint64(size), int(kind), addr(stream)))
}

//export flagcxshim_go_deviceMalloc
func flagcxshim_go_deviceMalloc(dev C.int, out unsafe.Pointer, size C.size_t, kind C.int, stream unsafe.Pointer) C.int {
	return C.int(deviceMalloc(int(dev), addr(out), uint64(size), int(kind), addr(stream)))
}

//export flagcxshim_go_deviceFree
func flagcxshim_go_deviceFree(dev C.int, ptr unsafe.Pointer, kind C.int, stream unsafe.Pointer) C.int {
	return C.int(deviceFree(int(dev), addr(ptr), int(kind), addr(stream)))
}

//export flagcxshim_go_setDevice
func flagcxshim_go_setDevice(dev C.int) C.int { return C.int(setDevice(int(dev))) }

//export flagcxshim_go_getDeviceCount
func flagcxshim_go_getDeviceCount(out unsafe.Pointer) C.int { return C.int(getDeviceCount(addr(out))) }

//export flagcxshim_go_getVendor
func flagcxshim_go_getVendor(out unsafe.Pointer) C.int { return C.int(getVendor(addr(out))) }

//export flagcxshim_go_hostGetDevicePointer
func flagcxshim_go_hostGetDevicePointer(dev C.int, out, host unsafe.Pointer) C.int {
	return C.int(hostGetDevicePointer(int(dev), addr(out), addr(host)))
}

//export flagcxshim_go_gdrMemAlloc
func flagcxshim_go_gdrMemAlloc(dev C.int, out unsafe.Pointer, size C.size_t) C.int {
	return C.int(gdrMemAlloc(int(dev), addr(out), uint64(size)))
}

//export flagcxshim_go_gdrMemFree
func flagcxshim_go_gdrMemFree(dev C.int, p unsafe.Pointer) C.int {
	return C.int(gdrMemFree(int(dev), addr(p)))
}

//export flagcxshim_go_streamCreate
func flagcxshim_go_streamCreate(dev C.int, out unsafe.Pointer) C.int {
	return C.int(streamCreate(int(dev), addr(out)))
}

//export flagcxshim_go_streamDestroy
func flagcxshim_go_streamDestroy(s unsafe.Pointer) C.int { return C.int(streamDestroy(addr(s))) }

//export flagcxshim_go_streamCopy
func flagcxshim_go_streamCopy(dev C.int, out, native unsafe.Pointer) C.int {
	return C.int(streamCopy(int(dev), addr(out), addr(native)))
}

//export flagcxshim_go_streamFree
func flagcxshim_go_streamFree(s unsafe.Pointer) C.int { return C.int(streamFree(addr(s))) }

//export flagcxshim_go_streamSynchronize
func flagcxshim_go_streamSynchronize(s unsafe.Pointer) C.int {
	return C.int(streamSynchronize(addr(s)))
}

//export flagcxshim_go_streamQuery
func flagcxshim_go_streamQuery(s unsafe.Pointer) C.int { return C.int(streamQuery(addr(s))) }

//export flagcxshim_go_streamWaitEvent
func flagcxshim_go_streamWaitEvent(s, e unsafe.Pointer) C.int {
	return C.int(streamWaitEvent(addr(s), addr(e)))
}

//export flagcxshim_go_streamValue64
func flagcxshim_go_streamValue64(s, a unsafe.Pointer, value C.uint64_t, write C.int) C.int {
	fn := "streamWaitValue64"
	if write != 0 {
		fn = "streamWriteValue64"
	}
	return C.int(streamValue64(fn, addr(s), addr(a), uint64(value), write != 0))
}

//export flagcxshim_go_eventCreate
func flagcxshim_go_eventCreate(dev C.int, out unsafe.Pointer, kind C.int) C.int {
	return C.int(eventCreate(int(dev), addr(out), int(kind)))
}

//export flagcxshim_go_eventDestroy
func flagcxshim_go_eventDestroy(e unsafe.Pointer) C.int { return C.int(eventDestroy(addr(e))) }

//export flagcxshim_go_eventRecord
func flagcxshim_go_eventRecord(e, s unsafe.Pointer) C.int {
	return C.int(eventRecord(addr(e), addr(s)))
}

//export flagcxshim_go_eventSynchronize
func flagcxshim_go_eventSynchronize(e unsafe.Pointer) C.int { return C.int(eventSynchronize(addr(e))) }

//export flagcxshim_go_eventQuery
func flagcxshim_go_eventQuery(e unsafe.Pointer) C.int { return C.int(eventQuery(addr(e))) }

//export flagcxshim_go_eventElapsedTime
func flagcxshim_go_eventElapsedTime(ms, a, b unsafe.Pointer) C.int {
	return C.int(eventElapsedTime(addr(ms), addr(a), addr(b)))
}

//export flagcxshim_go_ipcMemHandleCreate
func flagcxshim_go_ipcMemHandleCreate(out, size unsafe.Pointer) C.int {
	return C.int(ipcMemHandleCreate(addr(out), addr(size)))
}

//export flagcxshim_go_ipcMemHandleGet
func flagcxshim_go_ipcMemHandleGet(dev C.int, h, p unsafe.Pointer) C.int {
	return C.int(ipcMemHandleGet(int(dev), addr(h), addr(p)))
}

//export flagcxshim_go_ipcMemHandleOpen
func flagcxshim_go_ipcMemHandleOpen(dev C.int, h, out unsafe.Pointer) C.int {
	return C.int(ipcMemHandleOpen(int(dev), addr(h), addr(out)))
}

//export flagcxshim_go_ipcMemHandleClose
func flagcxshim_go_ipcMemHandleClose(dev C.int, p unsafe.Pointer) C.int {
	return C.int(ipcMemHandleClose(int(dev), addr(p)))
}

//export flagcxshim_go_ipcMemHandleFree
func flagcxshim_go_ipcMemHandleFree(h unsafe.Pointer) C.int { return C.int(ipcMemHandleFree(addr(h))) }

//export flagcxshim_go_getDeviceProperties
func flagcxshim_go_getDeviceProperties(props unsafe.Pointer, dev C.int) C.int {
	return C.int(getDeviceProperties(addr(props), int(dev)))
}

//export flagcxshim_go_getDevicePciBusId
func flagcxshim_go_getDevicePciBusId(out unsafe.Pointer, n, dev C.int) C.int {
	return C.int(getDevicePciBusId(addr(out), int(n), int(dev)))
}

//export flagcxshim_go_getDeviceByPciBusId
func flagcxshim_go_getDeviceByPciBusId(out, id unsafe.Pointer) C.int {
	return C.int(getDeviceByPciBusId(addr(out), addr(id)))
}

//export flagcxshim_go_launchHostFunc
func flagcxshim_go_launchHostFunc(s, fn, args unsafe.Pointer) C.int {
	return C.int(launchHostFunc(addr(s), addr(fn), addr(args)))
}

//export flagcxshim_go_dmaSupport
func flagcxshim_go_dmaSupport(dev C.int, out unsafe.Pointer) C.int {
	return C.int(dmaSupport(int(dev), addr(out)))
}

//export flagcxshim_go_getHandleForAddressRange
func flagcxshim_go_getHandleForAddressRange(dev C.int, out, buf unsafe.Pointer, size C.size_t, flags C.ulonglong) C.int {
	return C.int(getHandleForAddressRange(int(dev), addr(out), addr(buf), uint64(size), uint64(flags)))
}
