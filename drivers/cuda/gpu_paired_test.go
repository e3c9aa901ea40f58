//go:build gpu

package cuda

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// BenchmarkGPUPaired measures each hot path against two floors inside one
// process, in short slices that rotate between them: n calls made by
// scripts/cfloor.c's loops (the C floor, built as libcfloor.so, entered once
// per slice, so the transition into it is spread over n calls), n calls
// through the Go backend, and, where the test binary is built with cgo, n
// calls of the Go floor (internal/gofloor: the same driver calls, one cgo
// call each, gpu_gofloor_test.go). Separate runs of the C program and the
// Go benchmarks see the driver's own cost drift by up to 2x between seconds
// (cuCtxSynchronize on an idle context took 284 ns in one round and 556 ns
// in the next); slices a millisecond apart cancel that drift, so their
// ratios are the Go backend's overhead alone.
//
// Each sub-benchmark reports ns/op (the median Go slice), c-ns/op (the
// median C slice), go/c (the median of the slices' ratios) and, with the Go
// floor, gofloor-ns/op and go/gofloor. scripts/bench-ratio.sh paired builds
// the library and runs this with FLAGSHIM_CFLOOR_LIB set.
func BenchmarkGPUPaired(b *testing.B) {
	be := gpuBackend(b)
	slice := cfloor(b)
	env := newPairedEnv(b, be)
	var floors map[string]func() error
	rows := pairedRows(be, env)
	if goFloor != nil {
		floors = goFloor(b, env)
		rows = append(rows, aaRows(rows, goFloor(b, env), floors)...)
		if os.Getenv("FLAGSHIM_BENCH_PADS") != "" { // a map of twenty rows, asked for by itself
			rows = append(rows, goFloorPads(env, b)...)
		}
	}

	for _, c := range rows {
		b.Run(c.name, func(b *testing.B) {
			sides := []func() float64{
				func() float64 { return timeSlice(b, c.n, c.call, c.drain) },
				func() float64 {
					ns, _, _ := purego.SyscallN(slice, uintptr(c.op), uintptr(c.n))
					if int64(ns) < 0 {
						b.Fatalf("cfloor_slice(%d): the driver lacks the loop's function", c.op)
					}
					return float64(ns) / float64(c.n)
				},
			}
			if f := floors[c.name]; f != nil {
				sides = append(sides, func() float64 { return timeSlice(b, c.n, f, c.drain) })
			}
			rotate(b, sides, []string{"c-ns/op", "gofloor-ns/op"}, []string{"go/c", "go/gofloor"})
			// The Go side's allocations, apart from the harness's slices.
			b.ReportMetric(testing.AllocsPerRun(c.n, func() {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}), "go-allocs/op")
			if c.drain != nil {
				if err := c.drain(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// pairedRow is one hot path of the paired benchmarks: its Go side, the C
// floor's loop (op) and its slice length.
type pairedRow struct {
	name  string
	op    int
	n     int
	call  func() error
	drain func() error // after the clock stops, as the C loop does
}

// pairedRows are BenchmarkGPUPaired's rows (BenchmarkGPUSides runs their
// sides one at a time).
func pairedRows(be *driver.Backend, env *pairedEnv) []pairedRow {
	launch := func(fn device.Function, a []any) func() error {
		return func() error { return be.Launch(0, fn, one, one, 0, a...) }
	}
	drainDevice := func() error { return be.Synchronize(0) }
	drainStream := func() error { return env.st.Synchronize() }

	// Synchronize's C floor is the same driver calls: one
	// cuCtxSynchronize_v2 where the driver has it (CUDA 13.0+), as the
	// backend then makes, else cuCtxSetCurrent and cuCtxSynchronize.
	// SynchronizeVsSetSync keeps the second floor where the first is the
	// goal's.
	syncOp := opSynchronize
	if env.syncV2 != 0 {
		syncOp = opSyncContext
	}
	return []pairedRow{
		{"SetCurrent", opSetCurrent, 20000, func() error { return be.SetCurrent(0) }, nil},
		{"Synchronize", syncOp, 2000, func() error { return be.Synchronize(0) }, nil},
		{"RawSynchronize", syncOp, 2000, env.rawSync, nil},
		// Synchronize's prepared call kept in the benchmark's own memory:
		// the backend's Go path, apart from where its call is kept.
		{"PreparedSynchronize", syncOp, 2000, env.preparedSync(), nil},
		{"SynchronizeVsSetSync", opSynchronize, 2000, func() error { return be.Synchronize(0) }, nil},
		// The floor of any Go caller: cuCtxSetCurrent and cuCtxSynchronize
		// through clib's transition alone (one runtime.cgocall), no backend.
		{"RawSetThenSync", opSynchronize, 2000, env.rawSetThenSync, nil},
		{"Launch3Args", opSetLaunch3, 200, launch(env.nop3, nop3Args(env.p)), drainDevice},
		{"Launch8Args", opSetLaunch8, 200, launch(env.nop8, nop8Args(env.p)), drainDevice},
		{"RawLaunch3Args", opSetLaunch3, 200, env.rawLaunch(env.nop3, nop3Args(env.p)), drainDevice},
		{"RawLaunch8Args", opSetLaunch8, 200, env.rawLaunch(env.nop8, nop8Args(env.p)), drainDevice},
		// The same through the trampoline that lays parameters out
		// (clib.Prepared.CallParams), as Launch makes them: the launch's
		// transition alone.
		{"RawParamsLaunch3Args", opSetLaunch3, 200, env.rawParamsLaunch(env.nop3, 3), drainDevice},
		{"CopyHtoD4K", opSetHtoD4K, 200, func() error { return be.CopyHtoD(0, env.dev, env.host) }, nil},
		{"CopyDtoH4K", opSetDtoH4K, 200, func() error { return be.CopyDtoH(0, env.host, env.dev) }, nil},
		{"StreamSynchronize", opSetStreamSync, 2000, func() error { return env.st.Synchronize() }, nil},
		{"RawStreamSynchronize", opSetStreamSync, 2000, env.rawStreamSync, nil},
		{"EventRecord", opSetEventRecord, 2000, func() error { return env.st.Record(env.ev) }, drainStream},
		{"RawEventRecord", opSetEventRecord, 2000, env.rawRecord, drainStream},
	}
}

// aaRows are the harness's control: a row's Go floor set against itself
// (its Go side another instance of the same floor), for the rows whose
// goals are closest. The ratio such a row gives is what the harness reads
// where there is no difference: its bias and, across counts, its spread.
func aaRows(rows []pairedRow, sides, floors map[string]func() error) []pairedRow {
	var aa []pairedRow
	for _, r := range rows {
		switch r.name {
		case "Synchronize", "Launch3Args", "StreamSynchronize":
			name := "AA" + r.name
			floors[name] = floors[r.name]
			aa = append(aa, pairedRow{name, r.op, r.n, sides[r.name], r.drain})
		}
	}
	return aa
}

// op numbers are scripts/cfloor.c's enum op.
const (
	opSetCurrent     = 0
	opSynchronize    = 1
	opSetLaunch3     = 3
	opSetLaunch8     = 4
	opLaunch100      = 7
	opGraph100       = 8
	opSyncContext    = 9
	opSetHtoD4K      = 10
	opSetDtoH4K      = 11
	opSetStreamSync  = 12
	opSetEventRecord = 13
)

// cfloor opens libcfloor.so ($FLAGSHIM_CFLOOR_LIB), checked as the
// library's own loader checks a driver (it is code this process will run),
// sets its loops up on gpuImage and returns cfloor_slice's address.
func cfloor(b *testing.B) (slice uintptr) {
	const cfloorEnv = "FLAGSHIM_CFLOOR_LIB"
	if os.Getenv(cfloorEnv) == "" {
		b.Skip(cfloorEnv + " is unset: build libcfloor.so with scripts/bench-ratio.sh build and run scripts/bench-ratio.sh paired")
	}
	cf.once.Do(func() {
		lib, err := dl.Open(dl.Spec{Name: "libcfloor", EnvVar: cfloorEnv})
		if err != nil {
			cf.err = err
			return
		}
		sym := func(name string) uintptr {
			p, err := lib.Sym(name)
			if err != nil && cf.err == nil {
				cf.err = err
			}
			return p
		}
		cf.open, cf.graphOpen, cf.slice, cf.threads = sym("cfloor_open"), sym("cfloor_graph_open"), sym("cfloor_slice"), sym("cfloor_threads")
		if cf.err != nil {
			return
		}
		image := append([]byte(gpuImagePath()), 0)
		if rc, _, _ := purego.SyscallN(cf.open, uintptr(unsafe.Pointer(&image[0]))); int32(rc) != 0 {
			cf.err = fmt.Errorf("cfloor_open(%s) = %d", gpuImagePath(), int32(rc))
		}
	})
	if cf.err != nil {
		b.Fatal(cf.err)
	}
	return cf.slice
}

// cf is libcfloor.so, opened once per process: its setup is global.
var cf struct {
	once                            sync.Once
	err                             error
	open, graphOpen, slice, threads uintptr
}

// pairedEnv is what the paired rows use: device 0's kernels and buffers,
// a stream and an event, and the driver's functions as addresses (for the
// Go floor and the bare transition), resolved through the backend's own
// search, so every side calls the same library.
type pairedEnv struct {
	nop3, nop8 device.Function
	p          device.Ptr // nop3's and nop8's buffer (64 bytes)
	dev        device.Ptr // 4 KiB, the copies' device side
	host       []byte     // 4 KiB of Go memory, their host side
	st         device.Stream
	ev         device.Event

	ctx                                   uintptr // device 0's primary context
	set, sync, syncV2, launch, htod, dtoh uintptr // cuCtxSetCurrent, ...; syncV2 0 before CUDA 13.0
	streamSync, eventRecord               uintptr
	setFn, syncFn                         clib.Func
	syncV2Fn, streamSyncFn, recordFn      clib.Func
	launchFn                              clib.Func
	ctxArgs                               []uintptr // {ctx}, built once
	stArgs, recordArgs                    []uintptr // {stream}, {event, stream}
}

func newPairedEnv(b *testing.B, be *driver.Backend) *pairedEnv {
	e := &pairedEnv{host: make([]byte, 4096)}
	e.nop3, e.p = benchKernel(b, "nop3")
	e.nop8, _ = benchKernel(b, "nop8")
	var err error
	if e.dev, err = be.Alloc(0, 4096); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Free(0, e.dev) })
	if e.st, err = be.NewStream(0); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.st.Destroy() })
	if e.ev, err = be.NewEvent(0); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.ev.Destroy() })

	h, err := Vendor().Library.Open(nil) // the backend's own search: the same file
	if err != nil {
		b.Fatal(err)
	}
	var deviceGet, retain, htod, dtoh clib.Func
	if err := h.Resolve("cuda", []clib.Sym{
		{Fn: &deviceGet, Names: []string{"cuDeviceGet"}, Required: true},
		{Fn: &retain, Names: []string{"cuDevicePrimaryCtxRetain"}, Required: true},
		{Fn: &e.setFn, Names: []string{"cuCtxSetCurrent"}, Required: true},
		{Fn: &e.syncFn, Names: []string{"cuCtxSynchronize"}, Required: true},
		{Fn: &e.syncV2Fn, Names: []string{"cuCtxSynchronize_v2"}},
		{Fn: &e.launchFn, Names: []string{"cuLaunchKernel"}, Required: true},
		{Fn: &htod, Names: []string{"cuMemcpyHtoD_v2"}, Required: true},
		{Fn: &dtoh, Names: []string{"cuMemcpyDtoH_v2"}, Required: true},
		{Fn: &e.streamSyncFn, Names: []string{"cuStreamSynchronize"}, Required: true},
		{Fn: &e.recordFn, Names: []string{"cuEventRecord"}, Required: true},
	}); err != nil {
		b.Fatal(err)
	}
	var dev int32 // CUdevice
	if rc := deviceGet.CallCode(uintptr(unsafe.Pointer(&dev)), 0); rc != 0 {
		b.Fatalf("cuDeviceGet(0) = %d", rc)
	}
	if rc := retain.CallCode(uintptr(unsafe.Pointer(&e.ctx)), uintptr(dev)); rc != 0 {
		b.Fatalf("cuDevicePrimaryCtxRetain(device 0) = %d", rc)
	}
	e.ctxArgs = []uintptr{e.ctx}
	e.stArgs, e.recordArgs = []uintptr{handle(b, e.st)}, []uintptr{handle(b, e.ev), handle(b, e.st)}
	e.set, e.sync, e.syncV2, e.launch = e.setFn.Addr(), e.syncFn.Addr(), e.syncV2Fn.Addr(), e.launchFn.Addr()
	e.htod, e.dtoh, e.streamSync, e.eventRecord = htod.Addr(), dtoh.Addr(), e.streamSyncFn.Addr(), e.recordFn.Addr()
	return e
}

// The Raw rows make a row's driver calls through clib's transition alone
// (one runtime.cgocall into clib's trampoline, lists prebuilt), with no
// backend: beside the row itself and its Go floor they split what
// flagshim adds into the driver package's Go code (row - Raw) and the
// transition, clib's trampoline against cmd/cgo's wrapper (Raw - Go
// floor).

// rawSync is cuCtxSynchronize_v2(ctx) where the driver has it, else
// cuCtxSetCurrent(ctx) and cuCtxSynchronize: Synchronize's calls.
func (e *pairedEnv) rawSync() error {
	if !e.syncV2Fn.OK() {
		return e.rawSetThenSync()
	}
	if rc := clib.Code(e.syncV2Fn.CallList(e.ctxArgs)); rc != 0 {
		return fmt.Errorf("cuCtxSynchronize_v2 = %d", rc)
	}
	return nil
}

// rawLaunch is cuCtxSetCurrent(ctx), cuLaunchKernel(kernel, 1x1x1, 1x1x1,
// no shared memory, the legacy stream, params) in one transition, the
// parameters laid out once in C memory as the backend lays them out (an
// 8-byte slot per value): Launch's calls with no backend.
func (e *pairedEnv) rawLaunch(fn device.Function, args []any) func() error {
	mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil { // the row's first call says so
		return func() error { return fmt.Errorf("rawLaunch: mapping its parameters: %w", err) }
	}
	ptrs := (*[driver.MaxLaunchArgs]uintptr)(unsafe.Pointer(&mem[0]))
	vals := (*[driver.MaxLaunchArgs]uint64)(unsafe.Pointer(&mem[8*driver.MaxLaunchArgs]))
	for i, a := range args {
		v, ok := benchValue(a)
		if !ok {
			return func() error { return fmt.Errorf("rawLaunch: argument %d is a %T, which it does not lay out", i, a) }
		}
		vals[i] = v
		ptrs[i] = uintptr(unsafe.Pointer(&vals[i]))
	}
	h, _ := fn.(interface{ Handle() uintptr })
	call := []uintptr{h.Handle(), 1, 1, 1, 1, 1, 1, 0, 0, uintptr(unsafe.Pointer(&ptrs[0])), 0}
	return func() error {
		if r0, r1 := e.launchFn.CallAfter(&e.setFn, e.ctxArgs, call); clib.Code(r0)|clib.Code(r1) != 0 {
			return fmt.Errorf("cuCtxSetCurrent, cuLaunchKernel = %d, %d", clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
}

// benchValue is a benchmark argument as the kernel reads it, in an 8-byte
// slot: the types nop3Args and nop8Args pass.
func benchValue(a any) (uint64, bool) {
	switch x := a.(type) {
	case device.Ptr:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case float32:
		return uint64(math.Float32bits(x)), true
	case float64:
		return math.Float64bits(x), true
	}
	return 0, false
}

// rawParamsLaunch is rawLaunch through clib.Prepared.CallParams, the
// values of nop3's arguments laid out by the trampoline.
func (e *pairedEnv) rawParamsLaunch(fn device.Function, n int) func() error {
	p := e.launchFn.Prepare(&e.setFn, e.ctx)
	h, _ := fn.(interface{ Handle() uintptr })
	kernel := h.Handle()
	var vals [clib.MaxParams]uint64
	vals[0], vals[1], vals[2] = uint64(e.p), uint64(e.p+8), 1000
	return func() error {
		call := [11]uintptr{kernel, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}
		if r0, r1 := p.CallParams(&call, 9, &vals, n); clib.Code(r0)|clib.Code(r1) != 0 {
			return fmt.Errorf("cuCtxSetCurrent, cuLaunchKernel = %d, %d", clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
}

// preparedSync is rawSync's call prepared (clib.Prepared), as the
// backend prepares its own, and kept here.
func (e *pairedEnv) preparedSync() func() error {
	return callPrepared(e.prepareSync(new(clib.Prepared)))
}

// prepareSync prepares rawSync's call into p.
func (e *pairedEnv) prepareSync(p *clib.Prepared) *clib.Prepared {
	if e.syncV2Fn.OK() {
		*p = e.syncV2Fn.Prepare(nil, 0, e.ctx)
	} else {
		*p = e.syncFn.Prepare(&e.setFn, e.ctx)
	}
	return p
}

// callPrepared makes p's call.
func callPrepared(p *clib.Prepared) func() error {
	return func() error {
		if r0, r1 := p.Call(); clib.Code(r0)|clib.Code(r1) != 0 {
			return fmt.Errorf("prepared synchronize = %d, %d", clib.Code(r0), clib.Code(r1))
		}
		return nil
	}
}

// rawStreamSync is cuCtxSetCurrent(ctx), cuStreamSynchronize(stream) in one
// transition: StreamSynchronize's calls.
func (e *pairedEnv) rawStreamSync() error {
	if r0, r1 := e.streamSyncFn.CallAfter(&e.setFn, e.ctxArgs, e.stArgs); r0|r1 != 0 {
		return fmt.Errorf("cuCtxSetCurrent, cuStreamSynchronize = %d, %d", clib.Code(r0), clib.Code(r1))
	}
	return nil
}

// rawRecord is cuCtxSetCurrent(ctx), cuEventRecord(event, stream) in one
// transition: EventRecord's calls.
func (e *pairedEnv) rawRecord() error {
	if r0, r1 := e.recordFn.CallAfter(&e.setFn, e.ctxArgs, e.recordArgs); r0|r1 != 0 {
		return fmt.Errorf("cuCtxSetCurrent, cuEventRecord = %d, %d", clib.Code(r0), clib.Code(r1))
	}
	return nil
}

// rawSetThenSync is cuCtxSetCurrent and cuCtxSynchronize through clib's
// transition alone (Func.CallThen: both in one runtime.cgocall), on device
// 0's primary context: what any Go caller of the kit pays at least for
// those two calls.
func (e *pairedEnv) rawSetThenSync() error {
	if r1, r2 := e.setFn.CallThen(e.ctxArgs, &e.syncFn); r1|r2 != 0 {
		return fmt.Errorf("cuCtxSetCurrent, cuCtxSynchronize = %d, %d", clib.Code(r1), clib.Code(r2))
	}
	return nil
}

// handle is a device object's driver handle (a kernel, a stream, an event).
func handle(b *testing.B, x any) uintptr {
	h, ok := x.(interface{ Handle() uintptr })
	if !ok {
		b.Fatalf("%T has no Handle", x)
	}
	return h.Handle()
}

// goFloor, where the test binary is built with cgo (gpu_gofloor_test.go),
// gives the paired rows' Go floors by row name; nil without cgo, and those
// rows then have the C floor alone.
var goFloor func(b *testing.B, e *pairedEnv) map[string]func() error

// goFloorPads, with cgo, gives the Pad rows (gpu_gofloor_test.go).
var goFloorPads func(e *pairedEnv, b *testing.B) []pairedRow

// timeSlice times n calls and returns ns per call; drain runs after the
// clock stops.
func timeSlice(b *testing.B, n int, call func() error, drain func() error) float64 {
	t := time.Now()
	for range n {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	d := time.Since(t)
	if drain != nil {
		if err := drain(); err != nil {
			b.Fatal(err)
		}
	}
	return float64(d.Nanoseconds()) / float64(n)
}

// rotate runs the slices (the Go side first in the list, then its floors)
// in an order that rotates each iteration until the benchmark's time is
// up, so that no side always follows the same one, and reports the median
// Go slice (ns/op), each floor's median slice (units[i]) and the median of
// the iterations' Go/floor ratios (ratios[i]). It returns the sides'
// medians.
func rotate(b *testing.B, sides []func() float64, units, ratios []string) []float64 {
	ns := make([][]float64, len(sides))
	rs := make([][]float64, len(sides)-1)
	got := make([]float64, len(sides))
	for i := 0; b.Loop(); i++ {
		for k := range sides {
			j := (i + k) % len(sides)
			if i%2 == 1 {
				j = (i + len(sides) - k) % len(sides)
			}
			got[j] = sides[j]()
		}
		for j := range sides {
			ns[j] = append(ns[j], got[j])
			if j > 0 {
				rs[j-1] = append(rs[j-1], got[0]/got[j])
			}
		}
	}
	med := make([]float64, len(sides))
	for j := range sides {
		med[j] = median(ns[j])
	}
	b.ReportMetric(med[0], "ns/op")
	for j := 1; j < len(sides); j++ {
		b.ReportMetric(med[j], units[j-1])
		b.ReportMetric(median(rs[j-1]), ratios[j-1])
	}
	return med
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// gpuImagePath is the module image the benchmarks load: testdata/gpu.ptx,
// or $FLAGSHIM_GPU_IMAGE (an absolute path), which lets the benchmarks'
// plumbing run against the fake libcuda, whose images are text
// (driver/drivertest's AddImage) and which keeps no PTX.
func gpuImagePath() string {
	if p := os.Getenv("FLAGSHIM_GPU_IMAGE"); p != "" {
		return p
	}
	return "testdata/gpu.ptx"
}
