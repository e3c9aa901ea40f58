//go:build gpu

package nvshmem

// The issue-15 proof from Go: two PEs, one process and one GPU each,
// bootstrapped through NVSHMEM's own unique-id bootstrap (rank 0's id handed
// to rank 1 through a 0600 file in the launcher's private folder), each
// loading a plain PTX module (the hook must not run) and the ring module
// ring.cubin (the hook runs nvshmemx_cumodule_init) through drivers/cuda.
// The launcher's parts that need no GPU are in twope_launch_test.go, tested
// in twope_test.go.

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

const (
	twoPERanks   = 2
	twoPETimeout = 5 * time.Minute  // the whole launch
	twoPEGrace   = 20 * time.Second // how long a rank may outlive a failed peer
	twoPEUIDWait = 2 * time.Minute  // how long rank 1 waits for rank 0's id
)

// TestGPUTwoPE launches two ranks of this test binary, rank r on CUDA device
// r, and checks both result lines: each PE's symmetric int holds the number
// of its left neighbour, my_pe and n_pes are right on the host and on the
// device, the hook ran on ring.cubin and not on add.ptx, and the control
// (nvshmemx_cumodule_init called on add.ptx) failed with 7, as the original
// report's process-wide hook did. It skips, saying why, with fewer than two
// CUDA devices.
func TestGPUTwoPE(t *testing.T) {
	if dltest.IsChild(t) {
		twoPERank(t)
		return
	}
	n, err := cuda.New().DeviceCount()
	if err != nil {
		t.Skipf("two PEs need two CUDA devices; the CUDA driver gives none here: %v", err)
	}
	if n < twoPERanks {
		t.Skipf("two PEs need two CUDA devices; %d visible (CUDA_VISIBLE_DEVICES=%q)", n, os.Getenv("CUDA_VISIBLE_DEVICES"))
	}
	fx := os.Getenv(FixturesEnv)
	if fx == "" {
		fx = dltest.Abs(t, filepath.Join("testdata", "build"))
	}
	for _, f := range []string{"add.ptx", "ring.cubin"} {
		fixture(t, f) // fails with the command that builds it
	}
	dir, err := twoPEPrivateDir(t.TempDir())
	require.NoError(t, err)
	uidPath := filepath.Join(dir, twoPEUIDFile)
	var envs [][]string
	for rank := range twoPERanks {
		envs = append(envs, twoPEChildEnv(os.Environ(), t.Name(), rank, twoPERanks, uidPath, fx))
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), twoPETimeout)
	defer cancel()
	start := time.Now()
	runs := runTwoPE(ctx, exe, twoPEChildArgs(t.Name()), envs, t.TempDir(), twoPEGrace)
	t.Logf("both ranks done in %v", time.Since(start).Round(time.Millisecond))

	var all []twoPEResult
	for _, r := range runs {
		t.Logf("rank %d output:\n%s", r.Rank, r.Out)
		require.NoError(t, r.Err, "rank %d failed", r.Rank)
		assert.NoError(t, checkControlOutput(r.Out), "rank %d", r.Rank)
		rs, err := parseTwoPEResults(r.Out)
		require.NoError(t, err, "rank %d", r.Rank)
		require.Len(t, rs, 1, "rank %d printed one result line", r.Rank)
		assert.Equal(t, r.Rank, rs[0].Rank, "rank %d's line names it", r.Rank)
		all = append(all, rs...)
	}
	require.NoError(t, checkTwoPEResults(all, twoPERanks))
	for _, r := range all {
		t.Logf("rank %d (device %d): PE %d of %d got %d from its left neighbour; hooks on add.ptx %v, on ring.cubin %v; control %d",
			r.Rank, r.Device, r.MyPE, r.NPEs, r.Got, r.PlainHooks, r.RingHooks, r.ControlRC)
	}
}

// twoPERank is one rank of TestGPUTwoPE.
func twoPERank(t *testing.T) {
	c, err := twoPEFromEnv(os.Getenv)
	require.NoError(t, err)
	for _, kv := range twoPENoMulticast {
		k, v, _ := strings.Cut(kv, "=")
		require.Equal(t, v, os.Getenv(k), "%s keeps NVLink multicast off", k)
	}
	dev := c.Rank
	lib, err := Open(WithDevice(dev))
	require.NoError(t, err)
	major, minor, patch, _ := lib.Version()
	t.Logf("rank %d: NVSHMEM %d.%d.%d from %s on CUDA device %d", c.Rank, major, minor, patch, lib.Path, dev)

	// NVSHMEM's unique-id bootstrap: rank 0 gets the id, the others read it.
	var uid UniqueID
	if c.Rank == 0 {
		uid, err = lib.GetUniqueID()
		require.NoError(t, err)
		require.NoError(t, writeUniqueIDFile(c.UIDPath, uid))
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), twoPEUIDWait)
		defer cancel()
		uid, err = waitUniqueIDFile(ctx, c.UIDPath, 10*time.Millisecond)
		require.NoError(t, err)
	}
	require.NoError(t, lib.InitUniqueID(c.Rank, c.NRanks, uid)) // collective: returns once both joined
	st := lib.InitStatus()
	require.True(t, st.Initialized(), "init status %v", st)
	res := twoPEResult{Rank: c.Rank, Device: dev, MyPE: lib.MyPE(), NPEs: lib.NPEs(), Want: (c.Rank - 1 + c.NRanks) % c.NRanks}

	hs := hooks.NewHooks()
	_, err = lib.Register(hs)
	require.NoError(t, err)
	b := cuda.New(driver.WithHooks(hs))

	// The plain module: the hook's scope says no, the kernel runs.
	plain, err := b.LoadModule(dev, fixture(t, "add.ptx"), "add.ptx")
	require.NoError(t, err)
	res.PlainHooks = hs.Applied(plain)
	runPlainAdd(t, b, dev, plain)

	// The control: what the report's process-wide hook did to that module.
	fmt.Fprintln(os.Stderr, controlStart)
	res.ControlRC, err = lib.CumoduleInit(plain.Handle())
	fmt.Fprintln(os.Stderr, controlEnd)
	require.NoError(t, err)
	require.NoError(t, plain.Unload())

	// The ring module, through the hook.
	ring, err := b.LoadModule(dev, fixture(t, "ring.cubin"), "ring.cubin")
	require.NoError(t, err)
	res.RingHooks = hs.Applied(ring)
	put, err := ring.Function("ring_put")
	require.NoError(t, err)
	read, err := ring.Function("ring_read")
	require.NoError(t, err)

	sym := device.Ptr(lib.hostCall(t, "nvshmem_malloc", 4)) // collective
	require.NotZero(t, sym, "nvshmem_malloc(4) returned NULL")
	require.NoError(t, b.CopyHtoD(dev, sym, binary.LittleEndian.AppendUint32(nil, math.MaxUint32))) // -1
	lib.hostCall(t, "nvshmem_barrier_all")                                                          // every PE's int is -1 before any put
	one := [3]uint32{1, 1, 1}
	require.NoError(t, b.Launch(dev, put, one, one, 0, sym))
	require.NoError(t, b.Synchronize(dev))
	lib.hostCall(t, "nvshmem_barrier_all") // every put has landed
	out, err := b.Alloc(dev, 12)
	require.NoError(t, err)
	require.NoError(t, b.Launch(dev, read, one, one, 0, sym, out))
	got := make([]byte, 12)
	require.NoError(t, b.CopyDtoH(dev, got, out))
	i32 := func(i int) int { return int(int32(binary.LittleEndian.Uint32(got[4*i:]))) }
	res.Got, res.DevPE, res.DevN = i32(0), i32(1), i32(2)
	fmt.Println(res) // the line the launcher checks

	require.NoError(t, b.Free(dev, out))
	lib.hostCall(t, "nvshmem_free", uintptr(sym)) // collective
	require.NoError(t, ring.Unload())
	assert.Nil(t, hs.Applied(ring))
	require.NoError(t, lib.Finalize())
}

// runPlainAdd runs add.ptx's add over 1000 floats and checks every sum.
func runPlainAdd(t *testing.T, b *driver.Backend, dev int, m device.LoadedModule) {
	t.Helper()
	const n = 1000
	ab, bb := make([]byte, 4*n), make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(ab[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(bb[4*i:], math.Float32bits(float32(2*i)+0.5))
	}
	var ps [3]device.Ptr
	for i := range ps {
		p, err := b.Alloc(dev, 4*n)
		require.NoError(t, err)
		ps[i] = p
	}
	require.NoError(t, b.CopyHtoD(dev, ps[0], ab))
	require.NoError(t, b.CopyHtoD(dev, ps[1], bb))
	add, err := m.Function("add")
	require.NoError(t, err)
	require.NoError(t, b.Launch(dev, add, [3]uint32{(n + 255) / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, ps[0], ps[1], ps[2], uint32(n)))
	cb := make([]byte, 4*n)
	require.NoError(t, b.CopyDtoH(dev, cb, ps[2]))
	for i := range n {
		got := math.Float32frombits(binary.LittleEndian.Uint32(cb[4*i:]))
		if want := float32(i) + float32(2*i) + 0.5; got != want {
			t.Fatalf("add: c[%d] = %v, want %v", i, got, want)
		}
	}
	for _, p := range ps {
		require.NoError(t, b.Free(dev, p))
	}
}

// hostCall calls an NVSHMEM host function the plugin does not bind
// (nvshmem_malloc, nvshmem_barrier_all, nvshmem_free) with the PE's device
// current, as the plugin calls its own.
func (l *Lib) hostCall(t *testing.T, name string, args ...uintptr) uintptr {
	t.Helper()
	var fn clib.Func
	require.NoError(t, l.h.Resolve("nvshmem", []clib.Sym{{Fn: &fn, Names: []string{name}, Required: true}}), "%s does not export %s", l.Path, name)
	l.mu.Lock()
	defer l.mu.Unlock()
	var r uintptr
	require.NoError(t, l.withContext(func() error {
		r = fn.CallList(args)
		return nil
	}))
	return r
}
