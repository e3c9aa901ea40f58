package acme_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/driver/drivertest"
	"github.com/flagos-ai/flagshim/examples/acme"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/vendors"
)

func TestMain(m *testing.M) {
	flagshim.ServeProbeChild() // the isolated tier's children are this binary
	drivertest.Main(m)
}

// suite is the conformance kit flagshim's own vendors pass, run on Acme's
// fake library (testdata/fake_libacme.c, the kit's default FakeSource for
// a library named libacme, built as its first soname): an out-of-tree
// vendor proves itself the same way, flagshim's own vendors too.
func suite(*testing.T) *drivertest.Suite {
	return &drivertest.Suite{Vendor: acme.Vendor(), NewBackend: acme.New, Version: [2]int{1, 0}}
}

func TestFakes(t *testing.T) { suite(t).Test(t) }

func TestVendor(t *testing.T) {
	v := acme.Vendor()
	require.NoError(t, v.Validate())
	assert.Equal(t, acme.Type, v.Type)
	for op, names := range v.Symbols {
		for _, n := range names {
			assert.True(t, strings.HasPrefix(n, "acme"), "%s: %s", op, n)
		}
	}
	assert.Equal(t, "ACME_ERROR_OUT_OF_MEMORY", v.ResultName(2))
	assert.Zero(t, v.Auto, "flagos routes to acme only when asked")
	var names []string
	for _, x := range v.Variables() {
		names = append(names, x.Name)
	}
	assert.Equal(t, []string{acme.EnvVar, acme.VisibleDevicesEnv}, names)
}

// TestRegistered: acme's init registered it through the public call, once.
func TestRegistered(t *testing.T) {
	require.NoError(t, acme.Register(), "idempotent: the first attempt succeeded")
	v, ok := vendors.Lookup(acme.Type)
	require.True(t, ok)
	assert.Same(t, acme.Vendor(), v)
	err := vendors.Register(acme.Vendor())
	assert.Error(t, err, "a second registration is refused")
	assert.True(t, errors.Is(err, vendors.ErrClosed) || errors.Is(err, vendors.ErrDuplicate), "%v", err)
}

// The rest runs flagshim.Init in processes of their own, against the fake
// libacme.so.1, with no other vendor's runtime, whatever this machine has.

const childVar = "ACME_TEST_CHILD"

// inChild runs the test named child of this binary in a new process with
// flagshim's and the fakes' variables cleared, the other vendors' libraries
// pointed at files that do not exist, Acme's at its fake, then env set.
func inChild(t *testing.T, child string, env ...string) {
	t.Helper()
	lib := suite(t).Build(t)
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.v", "-test.count=1")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FLAGOS_") && !strings.HasPrefix(kv, "ACME_") && !strings.HasPrefix(kv, "FAKE_") && !strings.Contains(kv, "_VISIBLE_DEVICES=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	none := t.TempDir()
	cmd.Env = append(cmd.Env, childVar+"="+child, acme.EnvVar+"="+lib)
	for _, v := range vendors.All() {
		if v.Type != acme.Type {
			cmd.Env = append(cmd.Env, v.Library.EnvVar+"="+filepath.Join(none, v.Library.Sonames[0]))
		}
	}
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
	rep, err := flagshim.Init(context.Background())
	require.NoError(t, err)
	require.NotNil(t, rep)
	return rep
}

// devRoot makes a machine root with n Acme device nodes (links to /dev/null,
// a character device) for the presence tier.
func devRoot(t *testing.T, n int) string {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	for i := range n {
		require.NoError(t, os.Symlink("/dev/null", filepath.Join(root, "dev", "acme"+string(rune('0'+i)))))
	}
	return root
}

func TestTiers(t *testing.T) {
	for _, tc := range []struct{ name string }{{"exact"}, {"presence"}, {"isolated"}} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"FLAGOS_PROBE=" + tc.name, "FAKE_ACME_DEVICE_COUNT=2", "FLAGOS_BACKEND=acme", "WANT_TIER=" + tc.name}
			if tc.name == "presence" {
				env = append(env, "FLAGOS_TEST_ROOT="+devRoot(t, 2))
			}
			inChild(t, "TestChildTiers", env...)
		})
	}
}

func TestChildTiers(t *testing.T) {
	rep := child(t)
	assert.Equal(t, os.Getenv("WANT_TIER"), string(rep.Probe))
	b, err := device.Lookup(acme.Type)
	require.NoError(t, err)
	db, ok := b.(*driver.Backend)
	require.True(t, ok)
	assert.Equal(t, os.Getenv("WANT_TIER"), string(db.Tier()))
	r := b.Available()
	require.True(t, r.Available, r.Reason)
	assert.Equal(t, 2, r.Devices)
	assert.True(t, probe.Default.Original(string(acme.Type)).Available, "acme's original probe is registered")

	// No CUDA here: cuda means flagos, routed to acme.
	assert.True(t, rep.Alias.Active, rep.Alias.Reason)
	d, err := device.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, device.Device{Type: device.FlagOS, Index: 1}, d)
	cu, err := device.Lookup(device.CUDA)
	require.NoError(t, err)
	p, err := cu.Properties(1)
	require.NoError(t, err)
	assert.Contains(t, p.Name, "acme:1", "flagos names the vendor device it routes to")
	assert.Equal(t, "Acme", p.Vendor)
}

func TestComputeThroughCUDA(t *testing.T) {
	inChild(t, "TestChildCompute", "FAKE_ACME_DEVICE_COUNT=2", "FLAGOS_BACKEND=acme")
}

// TestChildCompute: code written for cuda allocates and copies on Acme.
func TestChildCompute(t *testing.T) {
	child(t)
	b, err := device.Lookup(device.CUDA)
	require.NoError(t, err)
	mem, err := device.MemoryOf(b)
	require.NoError(t, err)
	p, err := mem.Alloc(1, 64)
	require.NoError(t, err)
	in := []byte("flagshim on acme, through cuda....")
	require.NoError(t, mem.CopyHtoD(1, p, in))
	out := make([]byte, len(in))
	require.NoError(t, mem.CopyDtoH(1, out, p))
	assert.Equal(t, in, out)
	require.NoError(t, mem.Free(1, p))
}

func TestNoDevices(t *testing.T) {
	inChild(t, "TestChildNoDevices", "FAKE_ACME_DEVICE_COUNT=0", "FLAGOS_BACKEND=acme")
}

func TestChildNoDevices(t *testing.T) {
	rep := child(t)
	assert.False(t, rep.Alias.Active, "flagos has no devices: no alias")
	b, err := device.Lookup(acme.Type)
	require.NoError(t, err)
	r := b.Available()
	assert.False(t, r.Available)
	assert.Contains(t, r.Reason, "acme: no devices: acmeDeviceGetCount returned 0")
	fl, err := device.Lookup(device.FlagOS)
	require.NoError(t, err)
	assert.Contains(t, fl.Available().Reason, "FLAGOS_BACKEND=acme: acme is not available")
}

func TestCUDACompatStep(t *testing.T) {
	inChild(t, "TestChildCUDACompat", "FAKE_ACME_DEVICE_COUNT=2", "FLAGOS_BACKEND=acme", "ACME_CUDA_COMPAT=1")
}

// TestChildCUDACompat: the vendor_compat step redirects the live cuda
// probe; the alias, which reads the original, is decided all the same.
func TestChildCUDACompat(t *testing.T) {
	rep := child(t)
	assert.Equal(t, []string{acme.StepCUDACompat, "alias"}, probe.Default.RedirectedBy(string(device.CUDA)))
	assert.False(t, probe.Default.Original(string(device.CUDA)).Available)
	assert.True(t, rep.Alias.Active, "the guard read the original cuda probe: %s", rep.Alias.Reason)
}

func TestRegisterAfterInit(t *testing.T) {
	inChild(t, "TestChildRegisterAfterInit", "FAKE_ACME_DEVICE_COUNT=1")
}

func TestChildRegisterAfterInit(t *testing.T) {
	child(t)
	late := *acme.Vendor()
	late.Type = "acmelate"
	err := vendors.Register(&late)
	assert.ErrorIs(t, err, vendors.ErrClosed)
	assert.ErrorContains(t, err, "before flagshim.Init")
}
