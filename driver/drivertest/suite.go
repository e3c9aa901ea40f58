package drivertest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// Suite is one vendor package under test.
type Suite struct {
	Vendor *driver.Vendor // the package's description
	// NewBackend is the package's own constructor (cuda.New), which must
	// make a backend of Vendor and open nothing; nil is driver.New.
	NewBackend func(...driver.Option) *driver.Backend
	// FakeSource is the vendor's fake library: a C file with the vendor's
	// real API names and signatures, whose behaviour follows the knobs of
	// the kit's fake_common.h (FAKE_DEVICE_COUNT, FAKE_INIT_RESULT, ...).
	// A relative path is taken from the test's package folder; "" is the
	// package's testdata/fake_<Library.Name>.c. A CUDA-shaped driver API
	// includes the kit's fake_cufamily.c under its prefix, a HIP-shaped
	// runtime API fake_hipfamily.c (see Include); drivers/hip,
	// drivers/musa and examples/acme show each. FakeSoname is the file it
	// is built as ("" is the vendor's first soname) and FakeDefines its
	// -D flags. Every vendor, flagshim's own and those of other modules,
	// names its fake this way.
	FakeSource  string
	FakeSoname  string
	FakeDefines []string
	Version     [2]int // the fake's default driver version, decoded
	Child       string // the top-level test that runs the suite (Test): "TestFakes" when empty

	// PCIBusID is the form of the fake's PCI bus ids, with one verb for the
	// bus number; "" is CUDA's "00000000:%02X:00.0" (HIP's is
	// "0000:%02x:00.0").
	PCIBusID string
	// FakeNames are the names the fake's error-name function gives codes
	// that Vendor.Results lacks (HIP's hipGetErrorName names 1054
	// hipErrorTbd); a code it does not name gets the core's generated name.
	FakeNames map[int]string
	// Codes maps the result codes of fake_common.h, which are CUDA's
	// numbers (1 invalid value, 2 out of memory, 100 no device, 700 an
	// illegal address, ...), to the vendor's, for a fake that translates
	// them into its API's own (AscendCL's aclError: 2 is 207001); a code
	// it lacks is the same number in both. The cases set the FAKE_*_RESULT
	// knobs and read the errors through it. nil: the vendor's codes are
	// CUDA's numbers.
	Codes map[int]int
	// SharedName says the library names the platform rather than each
	// device (its name function takes no device: AscendCL's
	// aclrtGetSocName), so every device has the fake's first name.
	SharedName bool
	// DeviceName is the name Properties gives every device of the fake
	// where the vendor's API reports a model rather than a name (Kunlunxin's
	// XPUATTR_MODEL); "" means the names the fake is told
	// (FAKE_DEVICE_NAMES, else "Fake GPU <i>").
	DeviceName string
	// Capability is the compute capability and multiprocessor count
	// (Major, Minor, MultiProcessors) Properties gives for the fake's
	// devices when it is told FAKE_CC=9.0 and FAKE_SM_COUNT=132; nil is
	// {9, 0, 132}. A vendor that cannot read them (attribute numbers that
	// are not known) gives {0, 0, 0}: unknown.
	Capability *[3]int
	// Presence, when set, is the vendor's presence tier on its own fake,
	// for the case record_tiers: given a private folder, the sysfs root
	// the case made and the devices the driver's fake describes (the
	// exact tier's records, DriverVersion set to RecordDriverVersion), it
	// builds the fake of the vendor's management library (or what its
	// presence tier reads under root) describing the same devices and
	// returns the child's environment (the library's override, the fake's
	// knobs). nil: that case is skipped, saying so.
	Presence func(t *testing.T, dir, root string, devs []device.Record) []string
}

// name is the name of the fake's device i told names (see DeviceName).
func (s *Suite) name(given string) string {
	if s.DeviceName != "" {
		return s.DeviceName
	}
	return given
}

// capability is what Properties should give under the backend case's
// knobs (FAKE_CC=9.0, FAKE_SM_COUNT=132): Capability where set, else those
// numbers with 0 (unknown) for each the vendor has no attribute for (a
// negative attribute number).
func (s *Suite) capability() [3]int {
	if s.Capability != nil {
		return *s.Capability
	}
	c := [3]int{9, 0, 132}
	a := s.Vendor.Attributes
	for i, n := range []int{a.ComputeCapabilityMajor, a.ComputeCapabilityMinor, a.MultiprocessorCount} {
		if n < 0 {
			c[i] = 0
		}
	}
	return c
}

// checkVersion checks b's DriverVersion: the fake's default version,
// decoded (Version); for a vendor whose encoding is not known
// (VersionBase 0), an error matching device.ErrNotSupported.
func (s *Suite) checkVersion(t *testing.T, b *driver.Backend) {
	t.Helper()
	major, minor, err := b.DriverVersion()
	if !s.Vendor.VersionKnown() {
		assert.ErrorIs(t, err, device.ErrNotSupported, "the version's encoding is not known")
		return
	}
	require.NoError(t, err)
	assert.Equal(t, s.Version, [2]int{major, minor})
}

// checkVersionString checks a reported driver version: Version as
// "major.minor", or, for a vendor whose encoding is not known, the number
// as the library gave it.
func (s *Suite) checkVersionString(t *testing.T, v string) {
	t.Helper()
	if !s.Vendor.VersionKnown() {
		assert.Regexp(t, `^[1-9][0-9]*$`, v, "the number itself: its encoding is not known")
		return
	}
	assert.Equal(t, fmt.Sprintf("%d.%d", s.Version[0], s.Version[1]), v)
}

// Test runs the suite from the package's top-level test: in the parent it
// starts every case in a child process of that same test, in a child it runs
// the case the environment names.
func (s *Suite) Test(t *testing.T) {
	if s.Child == "" {
		s.Child = "TestFakes"
	}
	if dltest.IsChild(t) {
		s.ChildMain(t)
		return
	}
	s.Run(t)
}

// pciBusID is the fake's PCI bus id of device i.
// fakeUUID is device i's UUID as the kit's fakes give it (byte k is
// 0x10*(i+1)+k; a fake of ROCm's form writes the first eight as 16 hex
// digits: FAKE_UUID_TEXT), in the vendor's form.
func (s *Suite) fakeUUID(i int) string {
	var u [16]byte
	for k := range u {
		u[k] = byte(0x10*(i+1) + k)
	}
	if s.Vendor.UUIDForm == driver.UUIDHexText {
		return fmt.Sprintf("%s%x", s.Vendor.UUIDPrefix, u[:8])
	}
	return driver.FormatUUID(s.Vendor.UUIDPrefix, u)
}

func (s *Suite) pciBusID(i int) string {
	f := s.PCIBusID
	if f == "" {
		f = "00000000:%02X:00.0"
	}
	return fmt.Sprintf(f, 0x18+i)
}

const (
	caseEnv = "DRIVERTEST_CASE"
	dirsEnv = "DRIVERTEST_DIRS"
	libEnv  = "DRIVERTEST_LIB" // the fake the case built, for checks and counters
	// absentEnv makes the child search a soname no machine has, for the
	// cases about a library that is not there: on a machine with the real
	// driver installed (the GPU machine) the real soname would be found.
	absentEnv = "DRIVERTEST_ABSENT_SONAME"
	// nodesEnv gives the child's Library.Nodes (":"-joined); unset, the
	// child has none, so the vendor's own (HIP's /dev/kfd, absent on the
	// machines that run these tests) does not keep its fake from loading.
	nodesEnv = "DRIVERTEST_NODES"
)

// library is the vendor's search with the folders the parent chose: a child
// never searches the system's folders.
func (s *Suite) library() clib.Library {
	l := s.Vendor.Library
	l.Dirs, l.Nodes = nil, nil
	if n := os.Getenv(nodesEnv); n != "" {
		l.Nodes = strings.Split(n, ":")
	}
	if os.Getenv(absentEnv) != "" {
		l.Sonames = []string{"lib" + string(s.typ()) + "-absent-drivertest.so.1"}
	}
	if d := os.Getenv(dirsEnv); d != "" {
		l.Dirs = strings.Split(d, ":")
	}
	return l
}

// New makes a backend for a child case, with extra options. Its machine
// has no sysfs (driver.WithSysRoot names a folder that does not exist), so
// whose runtime answers rests on the fake's own facts wherever the kit
// runs: on a machine with an NVIDIA GPU, sysfs would otherwise name the
// fake's devices NVIDIA's.
func (s *Suite) New(opts ...driver.Option) *driver.Backend {
	base := []driver.Option{driver.WithLibrary(s.library()), driver.WithSysRoot("/nonexistent/drivertest-machine")}
	return driver.New(s.Vendor, append(base, opts...)...)
}

// Run runs every case: those that need no library in the test's own
// process, the others each in a child process. A case that does not apply
// to the vendor (a feature the core declares unsupported, a code the
// vendor lacks) is skipped, saying why; one that applies but cannot run
// (no C compiler, a fake that does not build) fails, saying why: the kit
// never passes by running nothing.
func (s *Suite) Run(t *testing.T) {
	cc := dltest.CC()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if why := s.notApplicable(c.needs); why != "" {
				t.Skip(why)
			}
			if c.skip != nil {
				if why := c.skip(s); why != "" {
					t.Skip("does not apply: " + why)
				}
			}
			t.Parallel()
			if c.table != nil {
				c.table(t, s)
				return
			}
			if cc == "" {
				t.Fatal("drivertest: no C compiler (go env CC) to build the fake library: this case cannot run; install one (gcc or clang)")
			}
			env := append(c.setup(t, s), caseEnv+"="+c.name)
			if !hasKey(env, dirsEnv) {
				env = append(env, dirsEnv+"="+dltest.PrivateDir(t))
			}
			out := dltest.MustChild(t, s.Child, env...)
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

func hasKey(env []string, k string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, k+"=") {
			return true
		}
	}
	return false
}

// ChildMain runs the case named by the environment; the package's top-level
// child test calls it.
func (s *Suite) ChildMain(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of " + strings.TrimPrefix(s.Child, "Test") + "'s parent test")
	}
	name := os.Getenv(caseEnv)
	for _, c := range cases {
		if c.name == name && c.check != nil {
			c.check(t, s, s.New())
			return
		}
	}
	t.Fatalf("unknown case %q", name)
}

// notAvailable checks the common shape of an unusable backend and returns
// its reason.
func notAvailable(t *testing.T, b *driver.Backend, targets ...error) string {
	t.Helper()
	r := b.Available()
	assert.False(t, r.Available)
	assert.Zero(t, r.Devices)
	assert.NotEmpty(t, r.Reason)
	_, err := b.Current()
	require.Error(t, err)
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	for _, target := range targets {
		assert.ErrorIs(t, err, target)
	}
	assert.Equal(t, r.Reason, err.Error())
	assert.ErrorIs(t, b.SetCurrent(0), device.ErrNotAvailable)
	assert.ErrorIs(t, b.Synchronize(0), device.ErrNotAvailable)
	_, err = b.Properties(0)
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	_, err = b.PCIBusID(0)
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	_, err = b.Alloc(0, 8)
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	_, err = b.NewStream(0)
	assert.ErrorIs(t, err, device.ErrNotAvailable)
	info := b.Describe()
	assert.Equal(t, "false", info.Extra["available"])
	assert.Equal(t, r.Reason, info.Extra["reason"])
	return r.Reason
}

// withOverride builds the fake (with defines) and points the override at it.
func withOverride(defines []string, kv ...string) func(*testing.T, *Suite) []string {
	return func(t *testing.T, s *Suite) []string {
		p := s.Build(t, defines...)
		return append([]string{s.envVar() + "=" + p, libEnv + "=" + p}, kv...)
	}
}

func readLog(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}
