package flagos_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/probe"
)

// musaMachine is a MUSA-only machine in the test double: two musa devices
// behind flagos, no usable CUDA, the cuda->flagos alias installed. cuda is
// what the code under test asks for.
func musaMachine(t *testing.T, hs *hooks.Hooks) (cuda device.Backend, vendor *devicetest.Backend, image []byte) {
	t.Helper()
	vendor = devicetest.New(devicetest.Config{Type: device.MUSA, Devices: []devicetest.Device{{Name: "MTT S4000"}, {Name: "MTT S4000", Memory: 1 << 20}}, Hooks: hs})
	image = vendor.AddModule("inc", devicetest.Module{
		Kernels: map[string]devicetest.Kernel{"inc": func(l *devicetest.Launch) error {
			b, err := l.Bytes(l.Args[0].(device.Ptr), 4)
			if err != nil {
				return err
			}
			binary.LittleEndian.PutUint32(b, binary.LittleEndian.Uint32(b)+l.Args[1].(uint32))
			return nil
		}},
		Globals: map[string]uint64{"nvshmemi_device_lib_version_d": 4, "nvshmemi_device_state_d": 4},
	})
	devs := device.NewRegistry()
	require.NoError(t, devs.Register(vendor))
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv(func(string) string { return "" }))
	require.NoError(t, devs.Register(fl))
	probes := probe.New()
	require.NoError(t, probes.Register("cuda", func() probe.Result { return probe.Result{Reason: "libcuda not found"} }))
	require.NoError(t, probes.Register("flagos", fl.Available))
	d, undo, err := alias.Install(devs, probes, "")
	require.NoError(t, err)
	t.Cleanup(undo)
	require.True(t, d.Active, d.Reason)
	cuda, err = devs.Lookup(device.CUDA)
	require.NoError(t, err)
	require.Equal(t, device.FlagOS, cuda.Type())
	return cuda, vendor, image
}

func TestComputeThroughTheAlias(t *testing.T) {
	hs := hooks.NewHooks()
	var hooked []string
	_, err := hs.Register(hooks.Hook{Name: "nvshmem-like", Scope: hooks.HasGlobals("nvshmemi_device_lib_version_d", "nvshmemi_device_state_d"),
		Init: func(m device.Module) error { hooked = append(hooked, m.Label()); return nil }})
	require.NoError(t, err)
	cuda, _, image := musaMachine(t, hs)

	mem, err := device.MemoryOf(cuda)
	require.NoError(t, err)
	cmp, err := device.ComputeOf(cuda)
	require.NoError(t, err)
	str, err := device.StreamsOf(cuda)
	require.NoError(t, err)

	free0, total, err := mem.MemInfo(1)
	require.NoError(t, err)
	p, err := cuda.Properties(1)
	require.NoError(t, err)
	assert.Equal(t, p.TotalMemory, total)
	ptr, err := mem.Alloc(1, 4)
	require.NoError(t, err)
	free1, _, _ := mem.MemInfo(1)
	assert.Less(t, free1, free0)
	require.NoError(t, mem.CopyHtoD(1, ptr, []byte{1, 0, 0, 0}))

	m, err := cmp.LoadModule(1, image, "inc.mod")
	require.NoError(t, err)
	assert.Equal(t, device.MUSA, m.Backend(), "a module is the vendor's")
	assert.Equal(t, []string{"inc.mod"}, hooked, "hooks apply to modules loaded through the alias")
	fn, err := m.Function("inc")
	require.NoError(t, err)
	require.NoError(t, cmp.Launch(1, fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, ptr, uint32(41)))
	got := make([]byte, 4)
	require.NoError(t, mem.CopyDtoH(1, got, ptr))
	assert.Equal(t, uint32(42), binary.LittleEndian.Uint32(got))

	st, err := str.NewStream(1)
	require.NoError(t, err)
	e0, err := str.NewEvent(1)
	require.NoError(t, err)
	e1, err := str.NewEvent(1)
	require.NoError(t, err)
	hb, err := str.AllocHost(1, 4)
	require.NoError(t, err)
	require.NoError(t, st.Record(e0))
	require.NoError(t, st.Launch(fn, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, ptr, uint32(8)))
	require.NoError(t, st.CopyDtoH(hb.Bytes(), ptr))
	require.NoError(t, st.Record(e1))
	require.NoError(t, st.Synchronize())
	assert.Equal(t, uint32(50), binary.LittleEndian.Uint32(hb.Bytes()))
	el, err := e1.Since(e0)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, el, time.Duration(0))
	require.NoError(t, st.Destroy())
	require.NoError(t, hb.Free())
	require.NoError(t, m.Unload())
	require.NoError(t, mem.Free(1, ptr))
}

func TestComputeErrorsThroughTheAlias(t *testing.T) {
	cuda, _, image := musaMachine(t, hooks.NewHooks())
	mem, _ := device.MemoryOf(cuda)
	cmp, _ := device.ComputeOf(cuda)
	str, _ := device.StreamsOf(cuda)
	for _, i := range []int{2, -2, 1 << 30} {
		_, err := mem.Alloc(i, 1)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
		_, _, err = mem.MemInfo(i)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
		_, err = cmp.LoadModule(i, image, "")
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
		_, err = str.NewStream(i)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
	}
	_, err := mem.Alloc(1, 1<<30)
	assert.ErrorIs(t, err, device.ErrOutOfMemory, "the vendor's error comes through")
	assert.ErrorContains(t, err, "flagos:1 (musa:1)")
	_, err = cmp.LoadModule(0, []byte("not an image"), "bad")
	assert.ErrorIs(t, err, device.ErrInvalidImage)
	m, err := cmp.LoadModule(0, image, "")
	require.NoError(t, err)
	_, err = m.Function("missing")
	assert.ErrorIs(t, err, device.ErrNotFound)
	require.NoError(t, cuda.SetCurrent(1))
	_, err = cmp.LoadModule(-1, image, "on current")
	require.NoError(t, err, "-1 is the current device")
}

func TestComputeNotSupportedByTheRoute(t *testing.T) {
	devs := registry(t, newFake(device.MUSA, 2, true, "ok")) // a vendor with no Memory/Compute/Streams
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
	_, err := fl.Alloc(0, 8)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.ErrorContains(t, err, "musa")
	_, err = fl.LoadModule(0, []byte("x"), "")
	assert.ErrorIs(t, err, device.ErrNotSupported)
	_, err = fl.NewStream(0)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	_, err = device.MemoryOf(newFake(device.MUSA, 1, true, ""))
	assert.ErrorIs(t, err, device.ErrNotSupported)

	none := flagos.New(registry(t), autoOrder, flagos.WithGetenv((&env{}).get))
	_, err = none.Alloc(0, 8)
	assert.ErrorIs(t, err, flagos.ErrNoRoute)
}
