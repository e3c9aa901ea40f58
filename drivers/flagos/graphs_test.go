package flagos_test

import (
	"encoding/binary"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/probe"
)

// incN is the conformance kit's inc(p, n) as a devicetest kernel.
func incN(l *devicetest.Launch) error {
	n := min(int(l.Args[1].(uint32)), l.Threads())
	b, err := l.Bytes(l.Args[0].(device.Ptr), 4*n)
	if err != nil {
		return err
	}
	for i := range n {
		binary.LittleEndian.PutUint32(b[4*i:], binary.LittleEndian.Uint32(b[4*i:])+1)
	}
	return nil
}

// TestGraphsThroughTheAlias: code written for cuda captures and replays a
// graph on a MUSA-only machine (the test double), and the graph is musa's.
func TestGraphsThroughTheAlias(t *testing.T) {
	cuda, vendor, _ := musaMachine(t, hooks.NewHooks())
	img := vendor.AddModule("graphs", devicetest.Module{Kernels: map[string]devicetest.Kernel{"inc": incN}})
	cmp, err := device.ComputeOf(cuda)
	require.NoError(t, err)
	m, err := cmp.LoadModule(1, img, "graphs")
	require.NoError(t, err)
	gb, ok := cuda.(drivertest.GraphBackend)
	require.True(t, ok, "flagos has memory, streams and graphs")
	drivertest.GraphReplay(t, gb, m, 1, 1000, 100, 7)

	g, err := device.GraphsOf(cuda)
	require.NoError(t, err)
	err = g.BeginCapture(nil)
	assert.ErrorIs(t, err, device.ErrInvalidValue, "the vendor's refusal comes through")
	assert.ErrorContains(t, err, "default stream cannot be captured")
	assert.ErrorContains(t, err, "flagos (musa, current device): begin capture")
	str, err := device.StreamsOf(cuda)
	require.NoError(t, err)
	st, err := str.NewStream(1)
	require.NoError(t, err)
	_, err = g.EndCapture(st)
	assert.ErrorIs(t, err, device.ErrInvalidValue)
	assert.ErrorContains(t, err, "flagos:1 (musa:1): end capture")
	require.NoError(t, g.BeginCapture(st))
	gr, err := g.EndCapture(st)
	require.NoError(t, err)
	assert.Equal(t, 1, gr.Device())
	require.NoError(t, gr.Destroy())
	require.NoError(t, st.Destroy())
}

func TestGraphsNotSupportedByTheRoute(t *testing.T) {
	devs := registry(t, newFake(device.MUSA, 2, true, "ok")) // a vendor with no Graphs
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv((&env{}).get))
	other := devicetest.New(devicetest.Config{})
	st, err := other.NewStream(0)
	require.NoError(t, err)
	err = fl.BeginCapture(st)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	assert.ErrorContains(t, err, "musa")
	_, err = fl.EndCapture(st)
	assert.ErrorIs(t, err, device.ErrNotSupported)
	_, err = device.GraphsOf(newFake(device.MUSA, 1, true, ""))
	assert.ErrorIs(t, err, device.ErrNotSupported)

	none := flagos.New(registry(t), autoOrder, flagos.WithGetenv((&env{}).get))
	assert.ErrorIs(t, none.BeginCapture(st), flagos.ErrNoRoute)
}

// TestGraphsOnFakeLibraries: the same through the real driver core on the
// fake libmusa.so.1 and libamdhip64.so.6 (the conformance kit's C fakes,
// with MUSA's and HIP's names), each alone on a machine without CUDA, in a
// child process of its own (a loaded library stays loaded).
func TestGraphsOnFakeLibraries(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake driver libraries")
	}
	for v, vendor := range map[string]*driver.Vendor{"musa": musa.Vendor(), "hip": hip.Vendor()} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(dltest.PrivateDir(t), "lib")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			lib := vendorstest.Driver(t, vendor, dir)
			out := dltest.MustChild(t, "TestGraphsOnFakeLibrariesChild", "GRAPHS_VENDOR="+v, "GRAPHS_LIB="+lib)
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

func TestGraphsOnFakeLibrariesChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of TestGraphsOnFakeLibraries")
	}
	v := map[string]*driver.Vendor{"musa": musa.Vendor(), "hip": hip.Vendor()}[os.Getenv("GRAPHS_VENDOR")]
	require.NotNil(t, v)
	path := os.Getenv("GRAPHS_LIB")
	lib := v.Library
	lib.Dirs, lib.Nodes = nil, nil // the fake only: no search, no /dev/kfd
	vb := driver.New(v, driver.WithLibrary(lib), driver.WithGetenv(func(k string) string {
		if k == v.Library.EnvVar {
			return path
		}
		return ""
	}))
	devs := device.NewRegistry()
	require.NoError(t, devs.Register(vb))
	fl := flagos.New(devs, autoOrder, flagos.WithGetenv(func(string) string { return "" }))
	require.NoError(t, devs.Register(fl))
	probes := probe.New()
	require.NoError(t, probes.Register("cuda", func() probe.Result { return probe.Result{Reason: "libcuda not found"} }))
	require.NoError(t, probes.Register("flagos", fl.Available))
	d, undo, err := alias.Install(devs, probes, "")
	require.NoError(t, err)
	defer undo()
	require.True(t, d.Active, d.Reason)

	cuda, err := devs.Lookup(device.CUDA)
	require.NoError(t, err)
	require.Equal(t, device.FlagOS, cuda.Type())
	cmp, err := device.ComputeOf(cuda)
	require.NoError(t, err)
	m, err := cmp.LoadModule(1, []byte(drivertest.AddImage), "graphs")
	require.NoError(t, err)
	assert.Equal(t, v.Type, m.Backend())
	drivertest.GraphReplay(t, cuda.(drivertest.GraphBackend), m, 1, 1000, 100, 7)
	require.NoError(t, m.Unload())
}
