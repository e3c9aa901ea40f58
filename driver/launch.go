package driver

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// MaxLaunchArgs is the most arguments Launch takes.
const MaxLaunchArgs = 64

// launchBuf is the memory of one launch: OpLaunchKernel's eleven arguments,
// the kernelParams array and the values it points to. It lives outside the
// Go heap (an anonymous mapping), so handing its addresses to the driver
// breaks no rule of Go's and needs no pinning, and it is reused, so a launch
// allocates nothing.
type launchBuf struct {
	call [11]uintptr
	ptrs [MaxLaunchArgs]uintptr
	vals [MaxLaunchArgs]uint64
}

// launchBufs holds the launch buffers that are not in use: a free list
// under a lock, and in front of it one slot per launchSlots of goroutines,
// each on a cache line of its own. A launch takes its goroutine's slot's
// buffer with one atomic swap and gives it back there with one compare-and-
// swap; the lock is taken only where the slot is empty or full (the first
// launch of a goroutine, two goroutines that share a slot and launch at
// once). Slabs are mapped as the number of concurrent launches grows and
// are never unmapped (about a kilobyte per concurrent launch at the peak).
// One slot for every goroutine (as the driver core had) made launches from
// several goroutines take turns on that slot's cache line and then on the
// lock; the slots keep them apart.
var launchBufs struct {
	slots [launchSlots]launchSlot
	mu    sync.Mutex
	free  []*launchBuf
}

// launchSlots is a power of two: the slot is the top bits of a hash.
const (
	launchSlotBits = 6
	launchSlots    = 1 << launchSlotBits
)

// launchSlot is one slot, padded so that no two slots (and nothing else)
// share a cache line, nor the pair of lines some processors fetch together.
type launchSlot struct {
	lb atomic.Pointer[launchBuf]
	_  [120]byte
}

// slotHere is the slot of the calling goroutine: a hash of an address on
// its stack. Goroutines' stacks lie apart, so goroutines spread over the
// slots, and a goroutine that launches in a loop gets the same slot each
// time (a stack that grows moves it to another slot: that costs a lock
// once, never correctness, since every slot is a lock-free exchange).
// Called once per launch, so the buffer goes back where it came from. Not
// inlined: x then lies at the same distance below its caller's frame from
// every call site, so a goroutine's slot depends on the depth it launches
// at, not on which line of the caller asked.
//
//go:noinline
func slotHere() *launchSlot {
	var x byte
	h := uint64(uintptr(unsafe.Pointer(&x))) * 0x9E3779B97F4A7C15 // Fibonacci hashing: the top bits depend on every bit
	return &launchBufs.slots[h>>(64-launchSlotBits)]
}

const launchSlab = 64 // buffers per mapping

// zeroArgs is a read-only block of zeros that every kernelParams slot
// points to when no argument fills it: a kernel given fewer arguments than
// it takes (where the driver cannot say how many it takes) reads zeros,
// never another launch's values. It is as large as a kernel parameter can
// be (CUDA: 32764 bytes).
var zeroArgs struct {
	once sync.Once
	addr uintptr
	err  error
}

func zeroArgsAddr() (uintptr, error) {
	zeroArgs.once.Do(func() {
		mem, err := unix.Mmap(-1, 0, 32<<10, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			zeroArgs.err = fmt.Errorf("driver: mapping the zero block of launch arguments: %w", err)
			return
		}
		zeroArgs.addr = uintptr(unsafe.Pointer(&mem[0]))
	})
	return zeroArgs.addr, zeroArgs.err
}

// getLaunchBuf takes a buffer: sl's, else one from the free list.
func getLaunchBuf(sl *launchSlot) (*launchBuf, error) {
	if sl.lb.Load() != nil {
		if lb := sl.lb.Swap(nil); lb != nil {
			return lb, nil
		}
	}
	launchBufs.mu.Lock()
	defer launchBufs.mu.Unlock()
	if len(launchBufs.free) == 0 {
		zero, err := zeroArgsAddr()
		if err != nil {
			return nil, err
		}
		size := int(unsafe.Sizeof(launchBuf{})) * launchSlab
		mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			return nil, fmt.Errorf("driver: mapping %d bytes for launch arguments: %w", size, err)
		}
		for i := range launchSlab {
			lb := (*launchBuf)(unsafe.Pointer(&mem[i*int(unsafe.Sizeof(launchBuf{}))]))
			for j := range lb.ptrs {
				lb.ptrs[j] = zero
			}
			launchBufs.free = append(launchBufs.free, lb)
		}
	}
	lb := launchBufs.free[len(launchBufs.free)-1]
	launchBufs.free = launchBufs.free[:len(launchBufs.free)-1]
	return lb, nil
}

// putLaunchBuf gives lb back with its first n slots cleared (they point
// to the zero block again): to sl where it is empty, else to the free list.
func putLaunchBuf(sl *launchSlot, lb *launchBuf, n int) {
	zero := zeroArgs.addr
	for i := range n {
		lb.ptrs[i] = zero
		lb.vals[i] = 0
	}
	if sl.lb.CompareAndSwap(nil, lb) {
		return
	}
	launchBufs.mu.Lock()
	launchBufs.free = append(launchBufs.free, lb)
	launchBufs.mu.Unlock()
}

// set stores argument i as the kernel reads it (argValue) in its slot.
func (lb *launchBuf) set(i int, a any, want uint16) error {
	v, err := argValue(i, a, want)
	if err != nil {
		return err
	}
	lb.vals[i] = v
	lb.ptrs[i] = uintptr(unsafe.Pointer(&lb.vals[i]))
	return nil
}

// argValue is argument i as the kernel reads it: the value's bytes,
// little-endian, in an 8-byte slot (the driver copies the parameter's own
// size from its start). want is the kernel's parameter size where the
// driver said it (0: unknown); an argument of another size is refused.
func argValue(i int, a any, want uint16) (uint64, error) {
	var v uint64
	var size uint16
	switch x := a.(type) {
	case device.Ptr:
		v, size = uint64(x), 8
	case uintptr:
		v, size = uint64(x), 8
	case int8:
		v, size = uint64(uint8(x)), 1
	case uint8:
		v, size = uint64(x), 1
	case int16:
		v, size = uint64(uint16(x)), 2
	case uint16:
		v, size = uint64(x), 2
	case int32:
		v, size = uint64(uint32(x)), 4
	case uint32:
		v, size = uint64(x), 4
	case int64:
		v, size = uint64(x), 8
	case uint64:
		v, size = x, 8
	case float32:
		v, size = uint64(math.Float32bits(x)), 4
	case float64:
		v, size = math.Float64bits(x), 8
	case int, uint:
		return 0, fmt.Errorf("%w: argument %d is a Go %T, whose size C does not share: pass int32/uint32 (C int) or int64/uint64", device.ErrInvalidValue, i, a)
	default:
		// reflect.TypeOf keeps a from escaping, so callers' arguments can
		// stay on their stacks.
		return 0, fmt.Errorf("%w: argument %d has type %s: Launch takes device.Ptr, uintptr and fixed-size integers and floats", device.ErrInvalidValue, i, reflect.TypeOf(a))
	}
	if want != 0 && want != size {
		return 0, fmt.Errorf("%w: argument %d is %d byte(s) (%s) but the kernel's parameter %d is %d byte(s)", device.ErrInvalidValue, i, size, reflect.TypeOf(a), i, want)
	}
	return v, nil
}

// Launch runs fn on device index (-1: the current device) with the given
// grid and block dimensions and dynamic shared memory, on the device's
// default stream (cuLaunchKernel). args are device.Ptr, uintptr, int8..int64,
// uint8..uint64, float32 or float64 values in the kernel's parameter order,
// at most MaxLaunchArgs; they are copied for the call, and no Go memory is
// handed to the driver. To launch without allocating, build the argument
// list once and pass it again (args...).
//
// Where the driver tells a kernel's parameters (cuFuncGetParamInfo, CUDA
// 12.4 and later), Launch refuses a count or an argument size that differs
// from the kernel's (device.ErrInvalidValue). Where it cannot (HIP, MUSA,
// older CUDA drivers) the count is not checked: a kernel given fewer
// arguments than it takes reads zeros for the missing ones, never another
// launch's values.
//
// Launch is asynchronous, as cuLaunchKernel is: it returns once the kernel
// is queued, and a fault in the kernel shows at the next synchronizing call
// (Synchronize, CopyDtoH, CopyHtoD on the same device).
func (b *Backend) Launch(index int, fn device.Function, grid, block [3]uint32, sharedMem uint32, args ...any) error {
	// The common case, in as few lines of code and memory as it can
	// (after a real driver's launch little of either is cached): a live
	// function of this backend's modules, on its own device, given as
	// many arguments as its kernel takes (the driver told how many: -1
	// where it did not), its launch prepared.
	if f, ok := fn.(*Function); ok && f != nil && index == f.ordinal && len(args) == f.nparams && f.direct() &&
		f.m.b == b && !f.m.gone.Load() {
		return f.launchDirect(&f.m.launches, 0, grid, block, sharedMem, args)
	}
	return b.launchChecked(index, fn, grid, block, sharedMem, args)
}

// launchChecked is Launch with every check in its order: an unavailable
// backend, a function that is not a live one of this backend's, the
// current device (-1), a function of another device.
func (b *Backend) launchChecked(index int, fn device.Function, grid, block [3]uint32, sharedMem uint32, args []any) error {
	s, err := b.ready("launches", OpLaunchKernel)
	if err != nil {
		return err
	}
	f, err := b.function(fn)
	if err != nil {
		return err
	}
	if index == -1 {
		index = int(b.cur.Load())
	}
	if index != f.ordinal {
		if uint(index) >= uint(len(s.devs)) {
			return s.rangeErr(index)
		}
		return fmt.Errorf("%w: %s: Launch on device %d of function %q of module %q, which is loaded on device %d",
			device.ErrInvalidValue, b.v.Type, index, f.name, f.m.label, f.ordinal)
	}
	return s.launch(&f.m.launches, f, 0, grid, block, sharedMem, args)
}

// function checks that fn is a live kernel of this backend.
func (b *Backend) function(fn device.Function) (*Function, error) {
	f, ok := fn.(*Function)
	switch {
	case !ok || f == nil || f.m == nil || f.h == 0:
		return nil, fmt.Errorf("%w: %s: Launch needs a function from one of its modules' Function, got %T", device.ErrInvalidValue, b.v.Type, fn)
	case f.m.b != b:
		return nil, fmt.Errorf("%w: %s: function %q belongs to another backend (%s)", device.ErrInvalidValue, b.v.Type, f.name, f.m.b.v.Type)
	case f.m.gone.Load():
		return nil, f.m.releasedErr("Launch(" + strconv.Quote(f.name) + ")")
	}
	return f, nil
}

// launch queues f on stream (0: the default stream) of f's device, taking
// turn, the lock of the stream launched on, for the call: launches on one
// stream take turns in Go (Stream.launches).
func (s *state) launch(turn *sync.Mutex, f *Function, stream uintptr, grid, block [3]uint32, sharedMem uint32, args []any) error {
	if len(args) > MaxLaunchArgs {
		return fmt.Errorf("%w: %s: Launch %q: %d arguments, at most %d", device.ErrInvalidValue, s.v.Type, f.name, len(args), MaxLaunchArgs)
	}
	if f.nparams >= 0 && len(args) != f.nparams {
		return fmt.Errorf("%w: %s: Launch %q: the kernel takes %d argument(s), Launch was given %d", device.ErrInvalidValue, s.v.Type, f.name, f.nparams, len(args))
	}
	if f.direct() {
		return f.launchDirect(turn, stream, grid, block, sharedMem, args)
	}
	turn.Lock()
	defer turn.Unlock()
	return s.launchBuffered(f, stream, grid, block, sharedMem, args)
}

// launchBuffered is a launch whose values go through a launch buffer: the
// kernel's parameters not told, more than clib lays out, or no prepared
// call.
func (s *state) launchBuffered(f *Function, stream uintptr, grid, block [3]uint32, sharedMem uint32, args []any) error {
	sl := slotHere()
	lb, err := getLaunchBuf(sl)
	if err != nil {
		return err
	}
	for i, a := range args {
		if err := lb.set(i, a, f.psize[i]); err != nil {
			putLaunchBuf(sl, lb, i)
			return fmt.Errorf("%s: Launch %q: %w", s.v.Type, f.name, err)
		}
	}
	var params uintptr
	if len(args) > 0 {
		params = uintptr(unsafe.Pointer(&lb.ptrs[0]))
	}
	if f.call.OK() {
		// The prepared call, its list on this goroutine's stack (clib
		// prepares calls only where it keeps lists in place: StackLists).
		call := [11]uintptr{f.h, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(sharedMem), stream, params, 0}
		selected, launched := f.call.CallArgs(call[:])
		putLaunchBuf(sl, lb, len(args))
		if c0, c1 := clib.Code(selected), clib.Code(launched); c0|c1 != 0 {
			return s.launchErr(f, c0, c1)
		}
		return nil
	}
	lb.call = [11]uintptr{f.h, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(sharedMem), stream, params, 0}
	sel, err := s.selector(f.m.dev)
	if err != nil {
		putLaunchBuf(sl, lb, len(args))
		return err
	}
	// One transition to C for both calls, on one thread: no locked
	// goroutine (see Synchronize).
	selected, launched := s.api.selectThen(sel.args[:], OpLaunchKernel, lb.call[:])
	putLaunchBuf(sl, lb, len(args))
	return s.launchErr(f, selected, launched)
}

// direct reports whether f launches the direct way (launchDirect): a
// prepared call (f.call) of a kernel whose parameters the driver told
// (so it reads exactly nparams of them), at most clib.MaxParams. A caller
// checks that it was given nparams arguments.
func (f *Function) direct() bool { return uint(f.nparams) <= clib.MaxParams && f.call.OK() }

// launchDirect is launch's common case (direct): the values read from
// args onto this goroutine's stack before the stream's turn is taken,
// then, holding it, the prepared call, whose trampoline lays them and
// kernelParams out in C memory of its own for the call
// (clib.Prepared.CallParams): no launch buffer, no shared line, nothing
// to give back.
func (f *Function) launchDirect(turn *sync.Mutex, stream uintptr, grid, block [3]uint32, sharedMem uint32, args []any) error {
	var vals [clib.MaxParams]uint64
	for i, a := range args {
		v, ok := paramValue(a, f.psize[i])
		if !ok {
			var err error
			if v, err = argValue(i, a, f.psize[i]); err != nil {
				return f.argErr(err)
			}
		}
		vals[i] = v
	}
	// Element by element: a composite literal is built in a temporary
	// and copied, whose wide loads stall on the narrow stores just made.
	var call [11]uintptr
	call[0] = f.h
	call[1], call[2], call[3] = uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2])
	call[4], call[5], call[6] = uintptr(block[0]), uintptr(block[1]), uintptr(block[2])
	call[7], call[8] = uintptr(sharedMem), stream
	turn.Lock()
	defer turn.Unlock()
	selected, launched := f.call.CallParams(&call, launchParamsArg, &vals, len(args))
	if c0, c1 := clib.Code(selected), clib.Code(launched); c0|c1 != 0 {
		return f.m.s.launchErr(f, c0, c1)
	}
	return nil
}

// paramValue is argValue's common cases, small enough to inline: a
// value of one of the types launches mostly pass, of the parameter's
// size want. ok is false for the rest, which argValue decides (other
// types, and every error).
func paramValue(a any, want uint16) (v uint64, ok bool) {
	switch x := a.(type) {
	case device.Ptr:
		return uint64(x), want == 8
	case uint32:
		return uint64(x), want == 4
	case int32:
		return uint64(uint32(x)), want == 4
	case uint64:
		return x, want == 8
	case float32:
		return uint64(math.Float32bits(x)), want == 4
	case float64:
		return math.Float64bits(x), want == 8
	}
	return 0, false
}

// argErr is a launch's error for an argument argValue refused (out of
// line: the direct launch stays small).
//
//go:noinline
func (f *Function) argErr(err error) error {
	return fmt.Errorf("%s: Launch %q: %w", f.m.s.v.Type, f.name, err)
}

// launchParamsArg is kernelParams's place among OpLaunchKernel's eleven
// arguments.
const launchParamsArg = 9

// launchErr is a launch's error from the selection's code and the
// launch's (nil when both are 0).
func (s *state) launchErr(f *Function, selected, launched int) error {
	if err := s.api.check(s.api.selectOp(), selected); err != nil {
		return s.opErr(s.api.selectOp(), f.m.dev, err)
	}
	if err := s.api.check(OpLaunchKernel, launched); err != nil {
		return fmt.Errorf("%s(device %d, %q of module %q): %w", s.api.sym(OpLaunchKernel), f.ordinal, f.name, f.m.label, err)
	}
	return nil
}
