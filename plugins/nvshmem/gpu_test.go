//go:build gpu

package nvshmem

// The proof through flagshim's own driver core (drivers/cuda's
// backend: LoadModule applies the hooks and unloads on a hook failure;
// Unload releases them first).

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// TestGPUDriverScenario: in one process, NVSHMEM with one PE and the
// plugin's hook, then (a) a plain PTX add kernel through drivers/cuda, hook
// not called, nothing printed; (b) the control, 7; (c) the NVSHMEM module
// writes my_pe 0 and n_pes 1; (d) reloads, then another module.
func TestGPUDriverScenario(t *testing.T) {
	if !dltest.IsChild(t) {
		runGPUChild(t, t.Name())
		return
	}
	lib, err := Open()
	require.NoError(t, err)
	major, minor, patch, _ := lib.Version()
	t.Logf("NVSHMEM %d.%d.%d from %s", major, minor, patch, lib.Path)
	uid, err := lib.GetUniqueID()
	require.NoError(t, err)
	require.NoError(t, lib.InitUniqueID(0, 1, uid))
	require.Equal(t, StatusInitialized, lib.InitStatus())
	hs := hooks.NewHooks()
	_, err = lib.Register(hs)
	require.NoError(t, err)

	b := cuda.New(driver.WithHooks(hs))
	const dev = 0

	// (a) the plain kernel.
	plain, err := b.LoadModule(dev, fixture(t, "add.ptx"), "add.ptx")
	require.NoError(t, err)
	assert.Nil(t, hs.Applied(plain))
	const n = 1000
	ab, bb := make([]byte, 4*n), make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(ab[4*i:], math.Float32bits(float32(i)))
		binary.LittleEndian.PutUint32(bb[4*i:], math.Float32bits(float32(2*i)+0.5))
	}
	da, err := b.Alloc(dev, 4*n)
	require.NoError(t, err)
	db, err := b.Alloc(dev, 4*n)
	require.NoError(t, err)
	dc, err := b.Alloc(dev, 4*n)
	require.NoError(t, err)
	require.NoError(t, b.CopyHtoD(dev, da, ab))
	require.NoError(t, b.CopyHtoD(dev, db, bb))
	add, err := plain.Function("add")
	require.NoError(t, err)
	require.NoError(t, b.Launch(dev, add, [3]uint32{(n + 255) / 256, 1, 1}, [3]uint32{256, 1, 1}, 0, da, db, dc, uint32(n)))
	cb := make([]byte, 4*n)
	require.NoError(t, b.CopyDtoH(dev, cb, dc))
	for i := range n {
		got := math.Float32frombits(binary.LittleEndian.Uint32(cb[4*i:]))
		if want := float32(i) + float32(2*i) + 0.5; got != want {
			t.Fatalf("add: c[%d] = %v, want %v", i, got, want)
		}
	}

	// (b) the control.
	fmt.Fprintln(os.Stderr, controlStart)
	rc, err := lib.CumoduleInit(plain.Handle())
	fmt.Fprintln(os.Stderr, controlEnd)
	require.NoError(t, err)
	assert.Equal(t, 7, rc)
	require.NoError(t, plain.Unload())

	// (c), (d).
	out, err := b.Alloc(dev, 8)
	require.NoError(t, err)
	expect := func(m device.LoadedModule, kernel string, want [2]int32, what string) {
		t.Helper()
		assert.Equal(t, []string{HookName}, hs.Applied(m), what)
		require.NoError(t, b.CopyHtoD(dev, out, []byte{0xf9, 0xff, 0xff, 0xff, 0xf9, 0xff, 0xff, 0xff}))
		fn, err := m.Function(kernel)
		require.NoError(t, err)
		require.NoError(t, b.Launch(dev, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, out))
		got := make([]byte, 8)
		require.NoError(t, b.CopyDtoH(dev, got, out))
		assert.Equal(t, want, [2]int32{int32(binary.LittleEndian.Uint32(got)), int32(binary.LittleEndian.Uint32(got[4:]))}, what)
	}
	for round := range 5 {
		m, err := b.LoadModule(dev, fixture(t, "pe.cubin"), "pe.cubin")
		require.NoError(t, err)
		expect(m, "write_pe", [2]int32{0, 1}, fmt.Sprint("pe.cubin round ", round))
		require.NoError(t, m.Unload())
		assert.Nil(t, hs.Applied(m))
	}
	m2, err := b.LoadModule(dev, fixture(t, "pe2.cubin"), "pe2.cubin")
	require.NoError(t, err)
	expect(m2, "write_pe2", [2]int32{100, 101}, "pe2.cubin after the reloads")
	m1, err := b.LoadModule(dev, fixture(t, "pe.cubin"), "pe.cubin")
	require.NoError(t, err)
	expect(m1, "write_pe", [2]int32{0, 1}, "pe.cubin beside pe2.cubin")
	require.NoError(t, m1.Unload())
	expect(m2, "write_pe2", [2]int32{100, 101}, "pe2.cubin after pe.cubin's unload")
	require.NoError(t, m2.Unload())
	for _, p := range []device.Ptr{da, db, dc, out} {
		require.NoError(t, b.Free(dev, p))
	}
	require.NoError(t, lib.Finalize())
}
