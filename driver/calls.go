package driver

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// The checked layer: one method per operation. Each turns the result code
// into an error (nil on success, allocating only on failure) and masks what
// a 32-bit legacy function wrote. Methods that need a context assume the
// caller has locked its OS thread and made one current (context.go).

// check is nil for success, else the *clib.Error of op's code.
func (a *api) check(op Op, c int) error {
	if c == 0 {
		return nil
	}
	return a.failed(op, c)
}

// failed is check's error for a code that is not 0, out of line so that
// check inlines into the hot paths: on success it is one compare.
func (a *api) failed(op Op, c int) error {
	if c == codePanic {
		if err := a.panicked(op); err != nil {
			return err
		}
	}
	return a.errorOf(op, c)
}

// errorOf builds the *clib.Error of op's code, asking the driver for its
// name and message, falling back on the vendor's table.
func (a *api) errorOf(op Op, c int) *clib.Error {
	name := a.errorText(OpErrorName, c)
	if name == "" {
		name = a.v.ResultName(c)
	}
	return clib.NewError(string(a.v.Type), a.sym(op), c, name, a.errorText(OpErrorString, c), a.v.Results[c].Is...)
}

// errorText asks the driver for a code's name or message; "" when it cannot.
func (a *api) errorText(op Op, c int) string {
	if !a.fn[op].OK() {
		return ""
	}
	var p uintptr
	switch a.v.ErrorText {
	case ErrorTextReturned:
		p = a.fn[op].Call(uintptr(c))
	default:
		if r := a.call(op, uintptr(c), uintptr(unsafe.Pointer(&p))); r != 0 {
			return ""
		}
	}
	return clib.GoString(p, clib.MaxCString)
}

// wide masks a value a 32-bit legacy function wrote into a zeroed 64-bit
// variable (little-endian: it filled the low half).
func (a *api) wide(op Op, v uint64) uint64 {
	if a.narrow[op] {
		return v & math.MaxUint32
	}
	return v
}

// fits reports whether n bytes can go through op (a 32-bit legacy function
// takes at most 4 GiB - 1).
func (a *api) fits(op Op, n uint64) bool { return !a.narrow[op] || n <= math.MaxUint32 }

// devArg is the device argument op takes: the ordinal or the handle.
func (a *api) devArg(op Op, d *devState) uintptr {
	if a.v.takesOrdinal(op) {
		return uintptr(d.ordinal)
	}
	return uintptr(d.handle)
}

func (a *api) init() error { return a.check(OpInit, a.callList(OpInit, []uintptr{0})) }

func (a *api) driverVersion() (int, error) {
	var v int32
	r := a.call(OpDriverVersion, uintptr(unsafe.Pointer(&v)))
	return int(v), a.check(OpDriverVersion, r)
}

func (a *api) deviceCount() (int, error) {
	var n int32
	r := a.call(OpDeviceCount, uintptr(unsafe.Pointer(&n)))
	return int(n), a.check(OpDeviceCount, r)
}

func (a *api) deviceGet(ordinal int) (uint64, error) {
	var h uint64
	r := a.call(OpDeviceGet, uintptr(unsafe.Pointer(&h)), uintptr(ordinal))
	return h, a.check(OpDeviceGet, r)
}

func (a *api) deviceName(d *devState) (string, error) {
	var buf [256]byte
	r := a.call(OpDeviceName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), a.devArg(OpDeviceName, d))
	if err := a.check(OpDeviceName, r); err != nil {
		return "", err
	}
	return clib.CString(buf[:]), nil
}

func (a *api) deviceTotalMem(d *devState) (uint64, error) {
	var n uint64
	r := a.call(OpDeviceTotalMem, uintptr(unsafe.Pointer(&n)), a.devArg(OpDeviceTotalMem, d))
	return a.wide(OpDeviceTotalMem, n), a.check(OpDeviceTotalMem, r)
}

func (a *api) deviceAttribute(attr int, d *devState) (int, error) {
	var v int32
	r := a.call(OpDeviceAttribute, uintptr(unsafe.Pointer(&v)), uintptr(attr), a.devArg(OpDeviceAttribute, d))
	return int(v), a.check(OpDeviceAttribute, r)
}

func (a *api) deviceUUID(d *devState) ([16]byte, error) {
	var u [16]byte
	r := a.call(OpDeviceUUID, uintptr(unsafe.Pointer(&u[0])), a.devArg(OpDeviceUUID, d))
	return u, a.check(OpDeviceUUID, r)
}

func (a *api) devicePCIBusID(d *devState) (string, error) {
	var buf [64]byte
	r := a.call(OpDevicePCIBusID, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), a.devArg(OpDevicePCIBusID, d))
	if err := a.check(OpDevicePCIBusID, r); err != nil {
		return "", err
	}
	return clib.CString(buf[:]), nil
}

// retainPrimary is OpPrimaryCtxRetain of the device's handle.
func (a *api) retainPrimary(d *devState) (uintptr, error) {
	var ctx uintptr
	r := a.call(OpPrimaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), a.devArg(OpPrimaryCtxRetain, d))
	return ctx, a.check(OpPrimaryCtxRetain, r)
}

// deviceContext learns device d's context the DeviceContext way: select the
// device on a locked thread (OpSetDevice, once per device in the process)
// and read the context that made current (OpCtxGetCurrent). The thread's
// previous context, where it had one, is made current again. On failure op
// is the operation that failed.
func (a *api) deviceContext(d *devState) (ctx uintptr, op Op, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var prev uintptr
	if a.call(OpCtxGetCurrent, uintptr(unsafe.Pointer(&prev))) != 0 {
		prev = 0 // nothing to restore
	}
	if err := a.check(OpSetDevice, a.callList(OpSetDevice, []uintptr{uintptr(d.ordinal)})); err != nil {
		return 0, OpSetDevice, err
	}
	if err := a.check(OpCtxGetCurrent, a.call(OpCtxGetCurrent, uintptr(unsafe.Pointer(&ctx)))); err != nil {
		return 0, OpCtxGetCurrent, err
	}
	if ctx == 0 {
		return 0, OpCtxGetCurrent, fmt.Errorf("%s: %s gave no context after %s(%d) succeeded",
			a.v.Type, a.sym(OpCtxGetCurrent), a.sym(OpSetDevice), d.ordinal)
	}
	if prev != 0 && prev != ctx {
		_ = a.callList(OpCtxSetCurrent, []uintptr{prev})
	}
	return ctx, 0, nil
}

// selectOp is the operation that makes a device current under the vendor's
// context model: OpCtxSetCurrent(ctx) (PrimaryContext, DeviceContext) or
// OpSetDevice(ordinal) (CurrentDevice). Both take one value, prebuilt per
// device (devState.sel).
func (a *api) selectOp() Op { return a.sel }

// makeCurrent selects a device on the calling (locked) thread. It allocates
// nothing.
func (a *api) makeCurrent(sel []uintptr) error {
	return a.check(a.selectOp(), a.callList(a.selectOp(), sel))
}

// current is the calling thread's selection (its context, or its device
// ordinal); ok is false when the library cannot say.
func (a *api) current() (sel uintptr, ok bool, err error) {
	op := OpCtxGetCurrent
	if a.v.Context == CurrentDevice {
		op = OpGetDevice
	}
	if !a.fn[op].OK() {
		return 0, false, nil
	}
	if a.v.Context == CurrentDevice {
		var d int32
		r := a.call(op, uintptr(unsafe.Pointer(&d)))
		return uintptr(d), true, a.check(op, r)
	}
	var c uintptr
	r := a.call(op, uintptr(unsafe.Pointer(&c)))
	return c, true, a.check(op, r)
}

// synchronizesContexts reports whether the library waits for a context it
// is given (OpSynchronizeContext), so that Synchronize needs not make it
// current: a vendor whose selector is a context, with the operation in
// CUDA's shape (decided once, by resolve).
func (a *api) synchronizesContexts() bool { return a.syncContext }

// synchronizeContext is OpSynchronizeContext's code for the context sel
// names, where synchronizesContexts: no adapter, so straight to clib.
func (a *api) synchronizeContext(sel []uintptr) int {
	return clib.Code(a.fn[OpSynchronizeContext].CallList(sel))
}

// selectThenSynchronize selects a device (makeCurrent's call) and
// synchronizes it in one transition to C, on one thread: the codes of both
// (the second 0 when the selection failed). It allocates nothing.
func (a *api) selectThenSynchronize(sel []uintptr) (selected, synced int) {
	if a.adapt[a.selectOp()] != nil || a.adapt[OpSynchronize] != nil {
		// A vendor's own shape: two calls on one locked thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if selected = a.callList(a.selectOp(), sel); selected != 0 {
			return selected, 0
		}
		return 0, a.callList(OpSynchronize, nil)
	}
	r1, r2 := a.fn[a.selectOp()].CallThen(sel, &a.fn[OpSynchronize])
	return clib.Code(r1), clib.Code(r2)
}

func (a *api) memGetInfo() (free, total uint64, err error) {
	r := a.call(OpMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	return a.wide(OpMemGetInfo, free), a.wide(OpMemGetInfo, total), a.check(OpMemGetInfo, r)
}

func (a *api) memAlloc(n uint64) (uint64, error) {
	var p uint64
	r := a.call(OpMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n))
	return a.wide(OpMemAlloc, p), a.check(OpMemAlloc, r)
}

func (a *api) memFree(p uint64) error {
	return a.check(OpMemFree, a.callList(OpMemFree, []uintptr{uintptr(p)}))
}

// memHostAlloc allocates pinned host memory (flags 0: portable to the
// allocating context).
func (a *api) memHostAlloc(n uint64) (uintptr, error) { return a.memHostAllocFlags(n, 0) }

// memHostAllocFlags allocates pinned host memory with flags
// (CU_MEMHOSTALLOC_PORTABLE 1, _DEVICEMAP 2; hipHostMallocPortable 1,
// hipHostMallocMapped 2).
func (a *api) memHostAllocFlags(n uint64, flags uint32) (uintptr, error) {
	var p uintptr
	r := a.call(OpMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n), uintptr(flags))
	return p, a.check(OpMemHostAlloc, r)
}

func (a *api) memFreeHost(p uintptr) error {
	return a.check(OpMemFreeHost, a.callList(OpMemFreeHost, []uintptr{p}))
}

// jitLogSize is the error-log buffer handed to OpModuleLoadDataEx.
const jitLogSize = 8192

// moduleLoad loads an image with OpModuleLoadDataEx and an error-log buffer
// when the vendor has both, else with OpModuleLoadData; jitLog is the JIT's
// own words on failure.
func (a *api) moduleLoad(image []byte) (h uintptr, jitLog string, err error) {
	if !a.fn[OpModuleLoadDataEx].OK() {
		r := a.call(OpModuleLoadData, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0])))
		return h, "", a.check(OpModuleLoadData, r)
	}
	if a.v.JIT == (JITOptions{}) {
		r := a.call(OpModuleLoadDataEx, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0])), 0, 0, 0)
		return h, "", a.check(OpModuleLoadDataEx, r)
	}
	logBuf := make([]byte, jitLogSize)
	// optionValues holds the buffer's address: pin it for the call.
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	defer pin.Unpin()
	opts := [2]int32{a.v.JIT.ErrorLogBuffer, a.v.JIT.ErrorLogBufferSize}
	vals := [2]uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	r := a.call(OpModuleLoadDataEx, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&image[0])),
		uintptr(len(opts)), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	runtime.KeepAlive(logBuf)
	if err := a.check(OpModuleLoadDataEx, r); err != nil {
		return 0, clib.CString(logBuf), err
	}
	return h, "", nil
}

func (a *api) moduleUnload(h uintptr) error {
	return a.check(OpModuleUnload, a.callList(OpModuleUnload, []uintptr{h}))
}

// moduleGetFunction looks name (NUL-terminated) up in module h.
func (a *api) moduleGetFunction(h uintptr, name []byte) (uintptr, error) {
	var f uintptr
	r := a.call(OpModuleGetFunction, uintptr(unsafe.Pointer(&f)), h, uintptr(unsafe.Pointer(&name[0])))
	return f, a.check(OpModuleGetFunction, r)
}

// moduleGetGlobal looks name (NUL-terminated) up in module h.
func (a *api) moduleGetGlobal(h uintptr, name []byte) (addr, size uint64, err error) {
	r := a.call(OpModuleGetGlobal, uintptr(unsafe.Pointer(&addr)), uintptr(unsafe.Pointer(&size)), h, uintptr(unsafe.Pointer(&name[0])))
	return a.wide(OpModuleGetGlobal, addr), a.wide(OpModuleGetGlobal, size), a.check(OpModuleGetGlobal, r)
}

// selectThenBuf is selectThen with args copied into a launch buffer's call
// block, outside the Go heap first: args itself does not escape (the
// tracer's and purego's paths hand their lists on), so a caller's list on
// its stack stays there and the call allocates nothing.
func (a *api) selectThenBuf(sel []uintptr, op Op, args []uintptr) (selected, r int, err error) {
	sl := slotHere()
	lb, err := getLaunchBuf(sl)
	if err != nil {
		return 0, 0, err
	}
	n := copy(lb.call[:], args)
	selected, r = a.selectThen(sel, op, lb.call[:n])
	putLaunchBuf(sl, lb, 0)
	return selected, r, nil
}

// prepare builds op's call with args after the selection sel, for a handle
// that makes it again and again (clib.Prepared: a stream's synchronize and
// records, an event's synchronize); not OK where the two have no fused
// call (an adapter) or clib has no trampoline here.
func (a *api) prepare(sel *selector, op Op, args ...uintptr) clib.Prepared {
	if !a.fused[op] {
		return clib.Prepared{}
	}
	return a.fn[op].Prepare(&a.fn[a.sel], sel.args[0], args...)
}

// prepareSyncContext builds Synchronize's one call for the context sel
// names where the library has it (synchronizesContexts).
func (a *api) prepareSyncContext(sel *selector) clib.Prepared {
	if !a.syncContext {
		return clib.Prepared{}
	}
	return a.fn[OpSynchronizeContext].Prepare(nil, 0, sel.args[0])
}

// selectThenArgs is selectThen with args on its caller's stack: passed as
// they are where clib keeps a list in place (clib.StackLists: its own
// trampoline copies it into its block) and both operations have CUDA's
// shape, else copied into a launch buffer first (selectThenBuf), so that
// args never escapes: an adapter may keep its list, purego.SyscallN does.
func (a *api) selectThenArgs(sel []uintptr, op Op, args []uintptr) (selected, r int, err error) {
	if clib.StackLists { // a constant: where false, this branch and its flow of args are compiled out
		if a.fused[op] {
			r0, r1 := a.fn[op].CallAfter(&a.fn[a.sel], sel, args)
			return clib.Code(r0), clib.Code(r1), nil
		}
	}
	return a.selectThenBuf(sel, op, args)
}

// selectThenCopy is selectThenBuf for a copy's three arguments, one of
// them an address of Go memory written in the call as
// uintptr(unsafe.Pointer(&b[0])): go:uintptrescapes keeps that memory
// alive and in place until the call returns, as for call.
//
//go:uintptrescapes
func (a *api) selectThenCopy(sel []uintptr, op Op, x, y, n uintptr) (selected, r int, err error) {
	args := [3]uintptr{x, y, n}
	return a.selectThenBuf(sel, op, args[:])
}

// selectThenMemcpyHtoD selects a device and copies src (Go memory) to dst
// on it in one transition to C (selectThen's codes). src is not empty.
func (a *api) selectThenMemcpyHtoD(sel []uintptr, dst uint64, src []byte) (selected, r int, err error) {
	return a.selectThenCopy(sel, OpMemcpyHtoD, uintptr(dst), uintptr(unsafe.Pointer(&src[0])), uintptr(len(src)))
}

// selectThenMemcpyDtoH selects a device and copies len(dst) bytes at src
// into dst (Go memory) in one transition to C. dst is not empty.
func (a *api) selectThenMemcpyDtoH(sel []uintptr, dst []byte, src uint64) (selected, r int, err error) {
	return a.selectThenCopy(sel, OpMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(src), uintptr(len(dst)))
}

func (a *api) streamCreate() (uintptr, error) {
	var s uintptr
	r := a.call(OpStreamCreate, uintptr(unsafe.Pointer(&s)), 0)
	return s, a.check(OpStreamCreate, r)
}

// handleOp runs an operation whose one argument is a handle, from a list
// prebuilt by the handle's owner: no allocation.
func (a *api) handleOp(op Op, h []uintptr) error { return a.check(op, a.callList(op, h)) }

func (a *api) eventCreate() (uintptr, error) {
	var e uintptr
	r := a.call(OpEventCreate, uintptr(unsafe.Pointer(&e)), 0)
	return e, a.check(OpEventCreate, r)
}

// eventElapsed is the time in milliseconds between two recorded events.
func (a *api) eventElapsed(start, end uintptr) (float32, error) {
	var ms float32
	r := a.call(OpEventElapsedTime, uintptr(unsafe.Pointer(&ms)), start, end)
	return ms, a.check(OpEventElapsedTime, r)
}

// hostSlice is the Go view of n bytes of pinned host memory at p.
func hostSlice(p uintptr, n uint64) []byte { return unsafe.Slice((*byte)(clib.Ptr(p)), n) }

// hostAddr is the address of b's first byte (C memory).
func hostAddr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// funcParamInfo is parameter index's offset and size in the kernel's
// parameter block; a *clib.Error past the last parameter.
func (a *api) funcParamInfo(f uintptr, index int) (offset, size uint64, err error) {
	r := a.call(OpFuncGetParamInfo, f, uintptr(index), uintptr(unsafe.Pointer(&offset)), uintptr(unsafe.Pointer(&size)))
	return offset, size, a.check(OpFuncGetParamInfo, r)
}

// captureRelaxed is CU_STREAM_CAPTURE_MODE_RELAXED (hipStreamCaptureModeRelaxed):
// see device.Graphs for why flagshim captures in no other mode.
const captureRelaxed = 2

func (a *api) streamBeginCapture(s uintptr) error {
	return a.check(OpStreamBeginCapture, a.callList(OpStreamBeginCapture, []uintptr{s, captureRelaxed}))
}

// streamEndCapture ends s's capture; the graph is 0 when the driver gives
// none (an invalidated capture).
func (a *api) streamEndCapture(s uintptr) (uintptr, error) {
	var g uintptr
	r := a.call(OpStreamEndCapture, s, uintptr(unsafe.Pointer(&g)))
	return g, a.check(OpStreamEndCapture, r)
}

// graphInstantiate instantiates g with flags 0.
func (a *api) graphInstantiate(g uintptr) (uintptr, error) {
	var e uintptr
	r := a.call(OpGraphInstantiate, uintptr(unsafe.Pointer(&e)), g, 0)
	return e, a.check(OpGraphInstantiate, r)
}

// graphLaunch launches an instantiated graph from a prebuilt list {exec,
// stream}: no allocation.
func (a *api) graphLaunch(args []uintptr) error {
	return a.check(OpGraphLaunch, a.callList(OpGraphLaunch, args))
}

// ---- more memory and stream operations (ops.go's second group) ----

// memsetOp is the memset operation of an element width (1, 2 or 4), sync
// or on a stream.
func memsetOp(width int, async bool) Op {
	ops := memsetOps
	if async {
		ops = memsetAsyncOps
	}
	switch width {
	case 2:
		return ops[1]
	case 4:
		return ops[2]
	}
	return ops[0]
}

func (a *api) memset(dst uint64, value uint32, width int, count uint64) error {
	op := memsetOp(width, false)
	return a.check(op, a.callList(op, []uintptr{uintptr(dst), uintptr(value), uintptr(count)}))
}

func (a *api) memcpyDtoD(dst, src, n uint64) error {
	return a.check(OpMemcpyDtoD, a.callList(OpMemcpyDtoD, []uintptr{uintptr(dst), uintptr(src), uintptr(n)}))
}

// memAttachGlobal is CU_MEM_ATTACH_GLOBAL (hipMemAttachGlobal): managed
// memory any stream may reach.
const memAttachGlobal = 1

func (a *api) memAllocManaged(n uint64) (uint64, error) {
	var p uint64
	r := a.call(OpMemAllocManaged, uintptr(unsafe.Pointer(&p)), uintptr(n), memAttachGlobal)
	return p, a.check(OpMemAllocManaged, r)
}

func (a *api) memAllocAsync(n uint64, stream uintptr) (uint64, error) {
	var p uint64
	r := a.call(OpMemAllocAsync, uintptr(unsafe.Pointer(&p)), uintptr(n), stream)
	return p, a.check(OpMemAllocAsync, r)
}

func (a *api) memHostGetDevicePtr(host uintptr) (uint64, error) {
	var p uint64
	r := a.call(OpMemHostGetDevicePtr, uintptr(unsafe.Pointer(&p)), host, 0)
	return p, a.check(OpMemHostGetDevicePtr, r)
}

// streamWaitGEQ is CU_STREAM_WAIT_VALUE_GEQ (hipStreamWaitValueGte): wait
// until the value at the address is at least the given one. The stream
// operations (memsets, copies, frees, value waits and writes, host
// functions on a stream) go through selectThen, below, from streamops.go.
const streamWaitGEQ = 0

func (a *api) ipcGetMemHandle(p uint64) (h [64]byte, err error) {
	r := a.call(OpIpcGetMemHandle, uintptr(unsafe.Pointer(&h[0])), uintptr(p))
	return h, a.check(OpIpcGetMemHandle, r)
}

// ipcLazyPeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
// (hipIpcMemLazyEnablePeerAccess): open with peer access enabled on demand.
const ipcLazyPeerAccess = 1

// ipcOpenMemHandle opens a handle. The C function takes the 64-byte handle
// by value; without an adapter the platform's calling convention
// (ipcByValue, ipc_GOARCH.go) places it.
func (a *api) ipcOpenMemHandle(h *[64]byte) (uint64, error) {
	if a.adapt[OpIpcOpenMemHandle] != nil {
		var p uint64
		r := a.call(OpIpcOpenMemHandle, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(h)), ipcLazyPeerAccess)
		return p, a.check(OpIpcOpenMemHandle, r)
	}
	// Heap values (they escape through new): their addresses, computed
	// before the call, stay put, unlike a stack variable's.
	p, cp := new(uint64), new([64]byte)
	*cp = *h // the callee may write to its copy
	args, ok := ipcByValue(uintptr(unsafe.Pointer(p)), cp, ipcLazyPeerAccess)
	if !ok {
		return 0, fmt.Errorf("%w: %s: passing a 64-byte IPC handle by value is not implemented on %s", device.ErrNotSupported, a.v.Type, runtime.GOARCH)
	}
	r := a.fn[OpIpcOpenMemHandle].CallCode(args...)
	runtime.KeepAlive(p)
	runtime.KeepAlive(cp)
	return *p, a.check(OpIpcOpenMemHandle, r)
}

func (a *api) ipcCloseMemHandle(p uint64) error {
	return a.check(OpIpcCloseMemHandle, a.callList(OpIpcCloseMemHandle, []uintptr{uintptr(p)}))
}

// deviceByPCIBusID is the device OpDeviceByPCIBusID writes for id
// (NUL-terminated): a handle, or an ordinal where the vendor says so.
func (a *api) deviceByPCIBusID(id []byte) (uint64, error) {
	var d uint64
	r := a.call(OpDeviceByPCIBusID, uintptr(unsafe.Pointer(&d)), uintptr(unsafe.Pointer(&id[0])))
	return d, a.check(OpDeviceByPCIBusID, r)
}

// dmaBufFD is CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD (hipMemRangeHandleTypeDmaBufFd).
const dmaBufFD = 1

func (a *api) memGetDMABufFD(p, n, flags uint64) (int, error) {
	fd := int32(-1)
	r := a.call(OpMemGetHandleForRange, uintptr(unsafe.Pointer(&fd)), uintptr(p), uintptr(n), dmaBufFD, uintptr(flags))
	return int(fd), a.check(OpMemGetHandleForRange, r)
}

// selectThen selects a device (makeCurrent's call) and runs op with args
// (values, never addresses of Go memory) in one transition to C, on one
// thread: the codes of both (the second 0 when the selection failed). It
// allocates nothing: the hot path of a stream's or an event's call.
func (a *api) selectThen(sel []uintptr, op Op, args []uintptr) (selected, r int) {
	if !a.fused[op] {
		return a.selectThenLocked(sel, op, args)
	}
	r0, r1 := a.fn[op].CallAfter(&a.fn[a.sel], sel, args)
	return clib.Code(r0), clib.Code(r1)
}

// selectThenLocked is selectThen for a vendor's own shape (an adapter):
// two calls on one locked thread.
func (a *api) selectThenLocked(sel []uintptr, op Op, args []uintptr) (selected, r int) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if selected = a.callList(a.selectOp(), sel); selected != 0 {
		return selected, 0
	}
	return 0, a.callList(op, args)
}

// streamCreateFlags creates a stream with flags (CU_STREAM_NON_BLOCKING 1,
// hipStreamNonBlocking 1: no implicit synchronization with the legacy
// default stream).
func (a *api) streamCreateFlags(flags uint32) (uintptr, error) {
	var s uintptr
	r := a.call(OpStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(flags))
	return s, a.check(OpStreamCreate, r)
}

// eventCreateFlags creates an event with flags (CU_EVENT_DISABLE_TIMING 2,
// hipEventDisableTiming 2).
func (a *api) eventCreateFlags(flags uint32) (uintptr, error) {
	var e uintptr
	r := a.call(OpEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(flags))
	return e, a.check(OpEventCreate, r)
}
