package acme_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/examples/acme"
	"github.com/flagos-ai/flagshim/probe"
)

func TestBackend(t *testing.T) {
	b := acme.New(3)
	assert.Equal(t, acme.Type, b.Type())
	assert.Equal(t, probe.Result{Available: true, Devices: 3, Reason: "3 fake acme devices (ACME_DEVICES)"}, b.Available())
	n, err := b.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	require.NoError(t, b.SetCurrent(2))
	cur, err := b.Current()
	require.NoError(t, err)
	assert.Equal(t, 2, cur)
	require.NoError(t, b.Synchronize(1))

	p, err := b.Properties(1)
	require.NoError(t, err)
	assert.Equal(t, "Acme A1", p.Name)
	assert.Equal(t, "Acme", p.Vendor)
	assert.Equal(t, uint64(acme.MemoryPerDevice), p.TotalMemory)

	for _, i := range []int{-2, 3} {
		assert.ErrorIs(t, b.SetCurrent(i), device.ErrInvalidIndex)
		assert.ErrorIs(t, b.Synchronize(i), device.ErrInvalidIndex)
		_, err := b.Properties(i)
		assert.ErrorIs(t, err, device.ErrInvalidIndex)
		assert.ErrorContains(t, err, "valid indexes are 0..2")
	}
	assert.Equal(t, "1.0", b.Describe().DriverVersion)

	none := acme.New(0)
	assert.False(t, none.Available().Available)
	assert.Contains(t, none.Available().Reason, "ACME_DEVICES=0")
	_, err = none.Current()
	assert.ErrorIs(t, err, device.ErrNotAvailable)
}

func TestFromEnv(t *testing.T) {
	for _, tt := range []struct {
		env     string
		want    int
		wantErr bool
	}{{"", 1, false}, {"0", 0, false}, {" 4 ", 4, false}, {"-1", 0, true}, {"two", 0, true}, {"99999", 0, true}} {
		t.Setenv(acme.EnvDevices, tt.env)
		b, err := acme.FromEnv()
		if tt.wantErr {
			assert.ErrorContains(t, err, "ACME_DEVICES=", "%q", tt.env)
			continue
		}
		require.NoError(t, err, "%q", tt.env)
		n, _ := b.DeviceCount()
		assert.Equal(t, tt.want, n, "%q", tt.env)
	}
}

// TestFlagosRoutesToAcme needs no Init: the flagos router over a registry of
// the test's own, with acme registered in it as the drivers step would.
func TestFlagosRoutesToAcme(t *testing.T) {
	devs := device.NewRegistry()
	a := acme.New(2)
	require.NoError(t, devs.Register(a))
	fl := flagos.New(devs, flagos.WithGetenv(func(k string) string {
		if k == flagos.EnvVar {
			return "acme"
		}
		return ""
	}))
	require.NoError(t, devs.Register(fl))

	to, err := fl.Route()
	require.NoError(t, err)
	assert.Same(t, a, to)
	r := fl.Available()
	assert.True(t, r.Available)
	assert.Equal(t, 2, r.Devices)
	assert.Contains(t, r.Reason, "routes to acme")
	p, err := fl.Properties(1)
	require.NoError(t, err)
	assert.Equal(t, "Acme A1 (acme:1)", p.Name)
	_, err = fl.Properties(2)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
}

// Init runs once per process: each case below runs one TestChild* test of
// this binary in a process of its own, with the environment it needs.

func TestLinkedThroughInit(t *testing.T) {
	inChild(t, "TestChildLinked", "ACME_DEVICES=3")
}

func TestZeroDevices(t *testing.T) {
	inChild(t, "TestChildZeroDevices", "ACME_DEVICES=0")
}

func TestBadDevicesVariable(t *testing.T) {
	inChild(t, "TestChildBadDevices", "ACME_DEVICES=many")
}

// The tests below need drivers/flagos (and, for the compat step, drivers/cuda)
// registered in flagshim's drivers phase, the root package's drivers.go.

func TestFlagosRoutesToAcmeAfterInit(t *testing.T) {
	inChild(t, "TestChildFlagos", "ACME_DEVICES=3", "FLAGOS_BACKEND=acme")
}

func TestFlagosRefusesAcmeWithoutDevices(t *testing.T) {
	inChild(t, "TestChildFlagosNoDevices", "ACME_DEVICES=0", "FLAGOS_BACKEND=acme")
}

func TestCUDACompatStep(t *testing.T) {
	inChild(t, "TestChildCUDACompat", "ACME_DEVICES=2", "FLAGOS_BACKEND=acme", "ACME_CUDA_COMPAT=1")
}

const childVar = "ACME_TEST_CHILD"

// inChild runs the test named child of this binary in a new process, with
// flagshim's and acme's variables cleared, libcuda and libmusa pointed at
// files that do not exist, then env set.
func inChild(t *testing.T, child string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAGOS_") && !strings.HasPrefix(kv, "ACME_") && !strings.HasPrefix(kv, "CUDA_VISIBLE") && !strings.HasPrefix(kv, "MUSA_VISIBLE") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	// No vendor runtime, whatever this machine has: the answers are the
	// same everywhere.
	none := t.TempDir()
	cmd.Env = append(cmd.Env, childVar+"="+child,
		"FLAGOS_LIBCUDA_PATH="+none+"/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+none+"/libmusa.so.1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s failed in its process (env %q): %v\n%s", child, env, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+child) {
		t.Fatalf("%s did not run in its process:\n%s", child, out)
	}
}

// child skips the test unless this process was started by inChild for it,
// then runs flagshim.Init.
func child(t *testing.T) *flagshim.Report {
	t.Helper()
	if os.Getenv(childVar) != t.Name() {
		t.Skipf("runs in a process of its own, started by the test that names it")
	}
	require.NoError(t, acme.Register(), "acme registered in init, before Init")
	rep, err := flagshim.Init(context.Background())
	require.NotNil(t, rep)
	initErr = err
	return rep
}

// initErr is what flagshim.Init returned in this (child) process.
var initErr error

// needsFlagos is the message of assertions that wait for the root wiring.
const needsFlagos = "needs drivers/flagos registered in flagshim's drivers phase (root drivers.go: flagos.New(devs) after the vendor backends)"

func lookupFlagos(t *testing.T) *flagos.Backend {
	t.Helper()
	b, err := device.Lookup(device.FlagOS)
	require.NoError(t, err, needsFlagos)
	fl, ok := b.(*flagos.Backend)
	require.True(t, ok, "flagos is a %T, not *flagos.Backend: %s", b, needsFlagos)
	return fl
}

func TestChildLinked(t *testing.T) {
	rep := child(t)
	require.NoError(t, initErr)

	b, err := device.Lookup(acme.Type)
	require.NoError(t, err)
	require.IsType(t, &acme.Backend{}, b)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	assert.Equal(t, 3, n, "ACME_DEVICES=3")
	assert.Contains(t, device.Default.Types(), acme.Type)

	assert.Equal(t, probe.Result{Available: true, Devices: 3, Reason: "3 fake acme devices (ACME_DEVICES)"},
		probe.Default.Original(string(acme.Type)))
	assert.Nil(t, probe.Default.RedirectedBy("cuda"), "ACME_CUDA_COMPAT unset: the compat step redirects nothing")

	d, err := device.Parse("acme:2")
	require.NoError(t, err)
	assert.Equal(t, device.Device{Type: acme.Type, Index: 2}, d)

	var steps [][2]string
	for _, r := range rep.Phases {
		assert.NoError(t, r.Err, "%s/%s", r.Phase, r.Step)
		steps = append(steps, [2]string{r.Phase, r.Step})
	}
	assert.Contains(t, steps, [2]string{flagshim.PhaseDrivers, acme.StepDrivers})
	assert.Contains(t, steps, [2]string{flagshim.PhaseVendorCompat, acme.StepCUDACompat})

	// A second registration of the type is refused: one backend per type.
	assert.ErrorIs(t, device.Register(acme.New(1)), device.ErrDuplicate)
	assert.ErrorIs(t, probe.Default.Register(string(acme.Type), acme.New(1).Available), probe.ErrDuplicate)
	// And after Init no step can be added.
	err = flagshim.AddStep(flagshim.PhaseDrivers, "acme_late", func(context.Context) error { return nil })
	assert.ErrorIs(t, err, flagshim.ErrInitDone)
	assert.ErrorContains(t, err, "before flagshim.Init")
}

func TestChildZeroDevices(t *testing.T) {
	child(t)
	require.NoError(t, initErr)
	b, err := device.Lookup(acme.Type)
	require.NoError(t, err, "acme is registered even without devices")
	assert.False(t, b.Available().Available)
	r := probe.Default.Original(string(acme.Type))
	assert.False(t, r.Available)
	assert.Contains(t, r.Reason, "ACME_DEVICES=0")
}

func TestChildBadDevices(t *testing.T) {
	child(t)
	require.Error(t, initErr)
	assert.ErrorContains(t, initErr, `ACME_DEVICES="many"`)
	assert.ErrorContains(t, initErr, "drivers/acme", "the error names the step")
	_, err := device.Lookup(acme.Type)
	assert.ErrorIs(t, err, device.ErrUnknownType, "the failed step registered nothing")
}

func TestChildFlagos(t *testing.T) {
	rep := child(t)
	require.NoError(t, initErr)
	a, err := device.Lookup(acme.Type)
	require.NoError(t, err)

	fl := lookupFlagos(t)
	to, err := fl.Route()
	require.NoError(t, err, "FLAGOS_BACKEND=acme")
	assert.Same(t, a, to, "flagos routes to the acme backend of device.Default")
	assert.Equal(t, acme.Type, fl.Describe().RoutesTo)
	r := probe.Default.Original(string(device.FlagOS))
	assert.True(t, r.Available, r.Reason)
	assert.Equal(t, 3, r.Devices)
	assert.Contains(t, r.Reason, "routes to acme")
	p, err := fl.Properties(2)
	require.NoError(t, err)
	assert.Equal(t, "Acme A1 (acme:2)", p.Name)

	// No CUDA runtime: the alias makes cuda mean flagos, hence acme.
	assert.False(t, probe.Default.Original(string(device.CUDA)).Available)
	require.True(t, rep.Alias.Active, rep.Alias.Reason)
	d, err := device.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, device.Device{Type: device.FlagOS, Index: 1}, d)
	b, err := device.Lookup(device.CUDA)
	require.NoError(t, err)
	assert.Same(t, fl, b)
}

func TestChildFlagosNoDevices(t *testing.T) {
	rep := child(t)
	require.NoError(t, initErr)
	fl := lookupFlagos(t)
	_, err := fl.Route()
	require.ErrorIs(t, err, flagos.ErrNoRoute)
	assert.ErrorContains(t, err, "acme is not available")
	assert.False(t, rep.Alias.Active, "no flagos device, no alias")
}

func TestChildCUDACompat(t *testing.T) {
	rep := child(t)
	require.NoError(t, initErr)
	lookupFlagos(t)
	require.Contains(t, probe.Default.Names(), string(device.CUDA),
		"needs drivers/cuda registered in flagshim's drivers phase: the compat step redirects the cuda probe")
	live := probe.Default.Live(string(device.CUDA))
	assert.True(t, live.Available)
	assert.Equal(t, 2, live.Devices)

	// The alias decision read the original cuda probe, not the redirect:
	// without a CUDA runtime the alias is active all the same.
	orig := probe.Default.Original(string(device.CUDA))
	assert.False(t, orig.Available)
	assert.NotContains(t, orig.Reason, "acme")
	assert.True(t, rep.Alias.Active, rep.Alias.Reason)
	assert.Equal(t, []string{acme.StepCUDACompat, "alias"}, probe.Default.RedirectedBy(string(device.CUDA)))
}
