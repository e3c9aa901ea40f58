package gpudrvtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/internal/gpudrv"
)

// Backend is what the driver packages' *Backend offers.
type Backend interface {
	device.Backend
	device.Describer
	DriverVersion() (major, minor int, err error)
	PCIBusID(index int) (string, error)
	MemInfo(index int) (free, total uint64, err error)

	Hooks() *device.Hooks
	LoadModule(index int, image []byte, label string) (*gpudrv.Module, error)
	Launch(index int, fn gpudrv.Function, grid, block [3]uint32, sharedMem uint32, args ...any) error
	Alloc(index int, n uint64) (gpudrv.DevicePtr, error)
	Free(index int, p gpudrv.DevicePtr) error
	CopyHtoD(index int, dst gpudrv.DevicePtr, src []byte) error
	CopyDtoH(index int, dst []byte, src gpudrv.DevicePtr) error
}

// Harness describes one driver package under test.
type Harness struct {
	Pkg        string // "cuda"
	Sym        string // "cu"
	ErrPrefix  string // "CUDA_"
	EnvVar     string // "FLAGOS_LIBCUDA_PATH"
	VisibleEnv string // "CUDA_VISIBLE_DEVICES"
	Lib        string // "libcuda"
	Source     string // the fake's C source, relative to the package folder
	Include    string // folder of fake_common.h, relative to the package folder
	Version    [2]int // the fake's default version, decoded: {13, 0}
	Errs       *gpudrv.Errors
	// New makes a backend that searches as spec says.
	New func(spec dl.Spec) Backend
	// NewWith makes one with a hook registry (nil: the default) and an
	// unavailable note (nil: none).
	NewWith func(spec dl.Spec, hooks *device.Hooks, note func() string) Backend
	// Spec is the package's default spec; children search only the dirs
	// the parent hands them, never the system's.
	Spec dl.Spec
	// Child is the name of the top-level test that dispatches child cases.
	Child string
}

const (
	caseEnv = "GPUDRVTEST_CASE"
	dirsEnv = "GPUDRVTEST_DIRS"
)

// Build compiles the fake into a fresh private folder as <Lib>.so.1 with the
// given -D flags and returns its absolute path.
func (h *Harness) Build(tb testing.TB, defines ...string) string {
	tb.Helper()
	dir := filepath.Join(dltest.PrivateDir(tb), "lib")
	require.NoError(tb, os.MkdirAll(dir, 0o755))
	out := filepath.Join(dir, h.Lib+".so.1")
	dltestBuild(tb, h, out, defines...)
	return out
}

func dltestBuild(tb testing.TB, h *Harness, out string, defines ...string) {
	tb.Helper()
	flags := append([]string{"-I" + dltest.Abs(tb, h.Include)}, defines...)
	dltest.BuildLib(tb, out, h.Lib+".so.1", []string{dltest.Abs(tb, h.Source)}, flags...)
}

// childSpec is the package's spec with the search folders the parent chose.
func (h *Harness) childSpec() dl.Spec {
	s := h.Spec
	s.Dirs = nil
	if d := os.Getenv(dirsEnv); d != "" {
		s.Dirs = strings.Split(d, ":")
	}
	return s
}

type fakeCase struct {
	name string
	// setup builds what the case needs and returns the child's environment.
	setup func(t *testing.T, h *Harness) []string
	// check runs in the child.
	check func(t *testing.T, h *Harness, b Backend)
}

// Run runs every case, each in its own child process.
func (h *Harness) Run(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler to build the fake driver library")
	}
	if _, err := os.Stat(h.Source); err != nil {
		t.Skipf("the fake's source %s is not here (a test binary run outside its package folder): %v", h.Source, err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := append(c.setup(t, h), caseEnv+"="+c.name)
			if !hasKey(env, dirsEnv) {
				env = append(env, dirsEnv+"="+dltest.PrivateDir(t))
			}
			out := dltest.MustChild(t, h.Child, env...)
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

// ChildMain runs the case named by the environment; it is called by the
// package's top-level child test.
func (h *Harness) ChildMain(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of " + strings.TrimPrefix(h.Child, "Test") + "'s parent test")
	}
	name := os.Getenv(caseEnv)
	for _, c := range cases {
		if c.name == name {
			b := h.New(h.childSpec())
			c.check(t, h, b)
			return
		}
	}
	t.Fatalf("unknown case %q", name)
}

func (h *Harness) sym(s string) string { return h.Sym + s }

// notAvailable checks the common shape of an unusable backend.
func notAvailable(t *testing.T, h *Harness, b Backend, targets ...error) string {
	t.Helper()
	r := b.Available()
	assert.False(t, r.Available)
	assert.Zero(t, r.Devices)
	assert.NotEmpty(t, r.Reason)
	_, err := b.Current()
	require.Error(t, err)
	assert.ErrorIs(t, err, h.Errs.NotAvailable)
	for _, target := range targets {
		assert.ErrorIs(t, err, target)
	}
	assert.Equal(t, r.Reason, err.Error())
	assert.ErrorIs(t, b.SetCurrent(0), h.Errs.NotAvailable)
	assert.ErrorIs(t, b.Synchronize(0), h.Errs.NotAvailable)
	_, err = b.Properties(0)
	assert.ErrorIs(t, err, h.Errs.NotAvailable)
	_, err = b.PCIBusID(0)
	assert.ErrorIs(t, err, h.Errs.NotAvailable)
	info := b.Describe()
	assert.Equal(t, "false", info.Extra["available"])
	assert.Equal(t, r.Reason, info.Extra["reason"])
	return r.Reason
}

// withOverride builds the fake (with defines) and points the override at it.
func withOverride(defines []string, kv ...string) func(*testing.T, *Harness) []string {
	return func(t *testing.T, h *Harness) []string {
		p := h.Build(t, defines...)
		return append([]string{h.EnvVar + "=" + p, "FLAGOS_TEST_LIB=" + p}, kv...)
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

var cases = []fakeCase{
	{
		name:  "no_library",
		setup: func(t *testing.T, h *Harness) []string { return nil },
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b)
			assert.Contains(t, reason, h.Lib+" not found")
			assert.Contains(t, reason, h.Lib+".so.1")
			assert.Contains(t, reason, h.EnvVar+"=/abs/path")
			_, err := b.DeviceCount()
			assert.ErrorIs(t, err, dl.ErrNotFound)
			_, _, err = b.DriverVersion()
			assert.ErrorIs(t, err, h.Errs.NotAvailable)
			info := b.Describe()
			assert.Empty(t, info.Library)
			assert.Empty(t, info.DriverVersion)
			require.NotEmpty(t, info.Attempts)
			assert.Equal(t, h.Lib+".so.1", info.Attempts[0].Path)
			assert.NotEmpty(t, info.Attempts[0].Error)
		},
	},
	{
		name: "ld_library_path",
		setup: func(t *testing.T, h *Harness) []string {
			p := h.Build(t)
			return []string{"LD_LIBRARY_PATH=" + filepath.Dir(p), "FLAGOS_TEST_LIB=" + p}
		},
		check: func(t *testing.T, h *Harness, b Backend) {
			r := b.Available()
			require.True(t, r.Available, r.Reason)
			assert.Equal(t, 2, r.Devices)
			info := b.Describe()
			assert.Equal(t, os.Getenv("FLAGOS_TEST_LIB"), info.Library)
			assert.Equal(t, []device.Attempt{{Path: h.Lib + ".so.1"}}, info.Attempts)
			assert.Equal(t, fmt.Sprintf("%d.%d", h.Version[0], h.Version[1]), info.DriverVersion)
			assert.Contains(t, r.Reason, info.Library)
		},
	},
	{
		name: "absolute_override",
		setup: func(t *testing.T, h *Harness) []string {
			// A library through LD_LIBRARY_PATH that lacks the PCI symbol
			// proves the override, which has it, is the one used.
			other := h.Build(t, "-DFAKE_NO_PCI_BUS_ID")
			return append(withOverride(nil)(t, h), "LD_LIBRARY_PATH="+filepath.Dir(other))
		},
		check: func(t *testing.T, h *Harness, b Backend) {
			r := b.Available()
			require.True(t, r.Available, r.Reason)
			info := b.Describe()
			assert.Equal(t, os.Getenv(h.EnvVar), info.Library)
			assert.Equal(t, []device.Attempt{{Path: os.Getenv(h.EnvVar)}}, info.Attempts)
			id, err := b.PCIBusID(0)
			require.NoError(t, err)
			assert.Equal(t, "00000000:18:00.0", id)
		},
	},
	{
		name: "relative_override",
		setup: func(t *testing.T, h *Harness) []string {
			p := h.Build(t)
			return []string{h.EnvVar + "=lib/" + h.Lib + ".so.1", "LD_LIBRARY_PATH=" + filepath.Dir(p)}
		},
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b, dl.ErrRelativeOverride)
			assert.Contains(t, reason, h.EnvVar)
			assert.Contains(t, reason, "absolute")
			info := b.Describe()
			assert.Empty(t, info.Library)
			require.Len(t, info.Attempts, 1, "nothing else is tried")
		},
	},
	{
		name: "world_writable",
		setup: func(t *testing.T, h *Harness) []string {
			p := h.Build(t)
			require.NoError(t, os.Chmod(p, 0o777))
			return []string{h.EnvVar + "=" + p}
		},
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b, dl.ErrUnsafePath)
			assert.Contains(t, reason, "chmod o-w")
		},
	},
	{
		name: "world_writable_searched",
		setup: func(t *testing.T, h *Harness) []string {
			p := h.Build(t)
			require.NoError(t, os.Chmod(filepath.Dir(p), 0o777))
			return []string{dirsEnv + "=" + filepath.Dir(p)}
		},
		check: func(t *testing.T, h *Harness, b Backend) {
			notAvailable(t, h, b, dl.ErrNotFound)
			info := b.Describe()
			require.Len(t, info.Attempts, 3)
			assert.Contains(t, info.Attempts[2].Error, "writable by anyone")
		},
	},
	{
		name:  "stub",
		setup: withOverride(nil, "FAKE_STUB=1"),
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b, h.Errs.StubLibrary)
			assert.Contains(t, reason, h.ErrPrefix+"ERROR_STUB_LIBRARY")
			assert.Contains(t, reason, "(34)")
			assert.Contains(t, reason, os.Getenv("FLAGOS_TEST_LIB"))
			assert.Contains(t, reason, "stub")
			var e *gpudrv.Error
			_, err := b.Current()
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 34, e.Code)
			assert.Equal(t, h.ErrPrefix+"ERROR_STUB_LIBRARY", e.Name)
			// A stub library answers nothing, not even its version.
			_, _, err = b.DriverVersion()
			assert.Error(t, err)
			assert.Equal(t, os.Getenv("FLAGOS_TEST_LIB"), b.Describe().Library)
		},
	},
	initCase(100, "ERROR_NO_DEVICE", func(e *gpudrv.Errors) error { return e.NoDevice }),
	initCase(803, "ERROR_SYSTEM_DRIVER_MISMATCH", func(e *gpudrv.Errors) error { return e.DriverMismatch }),
	initCase(804, "ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", func(e *gpudrv.Errors) error { return e.DriverMismatch }),
	initCase(999, "ERROR_UNKNOWN", func(e *gpudrv.Errors) error { return e.Unknown }),
	{
		name:  "zero_devices",
		setup: withOverride(nil, "FAKE_DEVICE_COUNT=0", "CUDA_VISIBLE_DEVICES=7", "MUSA_VISIBLE_DEVICES=7"),
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b, h.Errs.NoDevice)
			assert.Contains(t, reason, "no devices")
			assert.Contains(t, reason, h.VisibleEnv+`="7"`)
			assert.Contains(t, reason, os.Getenv("FLAGOS_TEST_LIB"))
			n, err := b.DeviceCount()
			assert.NoError(t, err, "zero devices is an answer")
			assert.Zero(t, n)
			info := b.Describe()
			assert.Equal(t, "7", info.Extra[h.VisibleEnv])
			assert.Equal(t, "0", info.Extra["devices"])
		},
	},
	{
		name:  "missing_optional_symbol",
		setup: withOverride([]string{"-DFAKE_NO_PCI_BUS_ID"}),
		check: func(t *testing.T, h *Harness, b Backend) {
			r := b.Available()
			require.True(t, r.Available, r.Reason)
			_, err := b.PCIBusID(0)
			assert.ErrorIs(t, err, h.Errs.NotSupported)
			assert.Contains(t, err.Error(), h.sym("DeviceGetPCIBusId"))
			p, err := b.Properties(1)
			require.NoError(t, err)
			assert.Equal(t, "Fake GPU 1", p.Name)
			assert.Contains(t, b.Describe().Extra, "missing."+h.sym("DeviceGetPCIBusId"))
		},
	},
	{
		name:  "versioned_fallback",
		setup: withOverride([]string{"-DFAKE_NO_TOTALMEM_V2"}, "FAKE_TOTAL_MEM=3221225472"),
		check: func(t *testing.T, h *Harness, b Backend) {
			p, err := b.Properties(0)
			require.NoError(t, err)
			assert.Equal(t, uint64(3<<30), p.TotalMemory)
			assert.Equal(t, h.sym("DeviceTotalMem"), b.Describe().Extra["symbol."+h.sym("DeviceTotalMem")])
		},
	},
	{
		name:  "missing_required_symbol",
		setup: withOverride([]string{"-DFAKE_NO_CTX_SYNCHRONIZE"}),
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b, dl.ErrMissingSymbol)
			assert.Contains(t, reason, h.sym("CtxSynchronize"))
			assert.Contains(t, reason, os.Getenv("FLAGOS_TEST_LIB"))
			assert.Contains(t, reason, "required")
		},
	},
	{
		name: "lazy_and_concurrent_first_use",
		setup: func(t *testing.T, h *Harness) []string {
			return append(withOverride(nil)(t, h), "FAKE_LOG="+filepath.Join(dltest.PrivateDir(t), "log"))
		},
		check: func(t *testing.T, h *Harness, b Backend) {
			logf := os.Getenv("FAKE_LOG")
			// New did nothing: the fake's constructor has not run.
			assert.Empty(t, readLog(t, logf), "New must not open the library")
			const n = 64
			var wg sync.WaitGroup
			start := make(chan struct{})
			results := make([]string, n)
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					var err error
					switch i % 4 {
					case 0:
						r := b.Available()
						results[i] = fmt.Sprint(r.Available, r.Devices)
					case 1:
						var c int
						c, err = b.DeviceCount()
						results[i] = fmt.Sprint(c > 0, c)
					case 2:
						err = b.Synchronize(i % 2)
						results[i] = "true 2"
					case 3:
						_, err = b.Properties(1)
						results[i] = "true 2"
					}
					if err != nil {
						results[i] = err.Error()
					}
				}()
			}
			close(start)
			wg.Wait()
			for i, r := range results {
				assert.Equal(t, "true 2", r, "goroutine %d", i)
			}
			lines := readLog(t, logf)
			assert.Equal(t, 1, count(lines, "load"), "one dlopen: %v", lines)
			assert.Equal(t, 1, count(lines, "init"), "one init: %v", lines)
		},
	},
	{
		name:  "backend",
		setup: withOverride(nil, "FAKE_DEVICE_NAMES=Fake H200 A,Fake H200 B", "FAKE_CC=9.0", "FAKE_SM_COUNT=132", "FAKE_TOTAL_MEM=150754820096"),
		check: func(t *testing.T, h *Harness, b Backend) {
			assert.Equal(t, device.Type(h.Pkg), b.Type())
			n, err := b.DeviceCount()
			require.NoError(t, err)
			require.Equal(t, 2, n)
			major, minor, err := b.DriverVersion()
			require.NoError(t, err)
			assert.Equal(t, h.Version, [2]int{major, minor})

			for i, name := range []string{"Fake H200 A", "Fake H200 B"} {
				p, err := b.Properties(i)
				require.NoError(t, err)
				assert.Equal(t, name, p.Name)
				assert.Equal(t, uint64(150754820096), p.TotalMemory)
				assert.Equal(t, [3]int{9, 0, 132}, [3]int{p.Major, p.Minor, p.MultiProcessors})
				assert.NotEmpty(t, p.Vendor)
				u := fmt.Sprintf("%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-", 0x10*(i+1), 0x10*(i+1)+1, 0x10*(i+1)+2, 0x10*(i+1)+3, 0x10*(i+1)+4, 0x10*(i+1)+5, 0x10*(i+1)+6, 0x10*(i+1)+7, 0x10*(i+1)+8, 0x10*(i+1)+9)
				assert.Contains(t, p.UUID, u)
				id, err := b.PCIBusID(i)
				require.NoError(t, err)
				assert.Equal(t, fmt.Sprintf("00000000:%02X:00.0", 0x18+i), id)
				free, total, err := b.MemInfo(i)
				require.NoError(t, err)
				assert.Equal(t, p.TotalMemory, total)
				assert.Less(t, free, total)
			}

			cur, err := b.Current()
			require.NoError(t, err)
			assert.Zero(t, cur)
			require.NoError(t, b.SetCurrent(1))
			cur, err = b.Current()
			require.NoError(t, err)
			assert.Equal(t, 1, cur)
			require.NoError(t, b.Synchronize(-1))
			require.NoError(t, b.Synchronize(0))

			for _, bad := range []int{-1, 2, 1 << 20} {
				err := b.SetCurrent(bad)
				assert.ErrorIs(t, err, h.Errs.InvalidDevice, "SetCurrent(%d)", bad)
				assert.Contains(t, err.Error(), "valid indices are 0..1")
			}
			assert.ErrorIs(t, b.Synchronize(2), h.Errs.InvalidDevice)
			_, err = b.Properties(2)
			assert.ErrorIs(t, err, h.Errs.InvalidDevice)
			_, err = b.PCIBusID(-3)
			assert.ErrorIs(t, err, h.Errs.InvalidDevice)
			cur, _ = b.Current()
			assert.Equal(t, 1, cur, "a failed SetCurrent changes nothing")

			info := b.Describe()
			assert.Equal(t, "true", info.Extra["available"])
			assert.Equal(t, "2", info.Extra["devices"])
			assert.Equal(t, h.sym("DeviceTotalMem_v2"), info.Extra["symbol."+h.sym("DeviceTotalMem")])
			assert.NotContains(t, info.Extra, h.VisibleEnv)
		},
	},
	{
		name:  "threads",
		setup: withOverride(nil, "FAKE_DEVICE_COUNT=4"),
		check: func(t *testing.T, h *Harness, b Backend) {
			// The fake's contexts are per thread and Synchronize fails
			// without one: every call must set it on its own locked thread,
			// whatever thread the goroutine is on.
			var wg sync.WaitGroup
			errs := make(chan error, 1024)
			for g := 0; g < 32; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 200; i++ {
						d := (g + i) % 4
						if err := b.Synchronize(d); err != nil {
							errs <- err
							return
						}
						if i%7 == 0 {
							if err := b.SetCurrent(d); err != nil {
								errs <- err
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			c, err := b.Current()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, c, 0)
			assert.Less(t, c, 4)
		},
	},
	{
		name:  "hot_paths_allocate_nothing",
		setup: withOverride(nil),
		check: func(t *testing.T, h *Harness, b Backend) {
			if raceEnabled {
				t.Skip("the race detector's instrumentation allocates")
			}
			require.NoError(t, b.SetCurrent(1)) // the first use retains the contexts
			require.NoError(t, b.SetCurrent(0))
			allocs := testing.AllocsPerRun(200, func() {
				_, _ = b.Current()
				_ = b.SetCurrent(1)
				_ = b.Synchronize(-1)
				_ = b.Synchronize(0)
			})
			assert.Zero(t, allocs, "Current, SetCurrent and Synchronize must not allocate")
		},
	},
	{
		name:  "call_error",
		setup: withOverride(nil, "FAKE_SYNC_RESULT=700"),
		check: func(t *testing.T, h *Harness, b Backend) {
			err := b.Synchronize(1)
			require.Error(t, err)
			var e *gpudrv.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 700, e.Code)
			assert.Equal(t, h.ErrPrefix+"ERROR_ILLEGAL_ADDRESS", e.Name)
			assert.Contains(t, e.Message, "illegal memory access")
			assert.Equal(t, fmt.Sprintf("%s(device 1): %s: %sERROR_ILLEGAL_ADDRESS (700): fake: an illegal memory access was encountered",
				h.sym("CtxSynchronize"), h.Pkg, h.ErrPrefix), err.Error())
			assert.NotErrorIs(t, err, h.Errs.NotAvailable)
			assert.True(t, b.Available().Available, "a failed call does not change the probe")
		},
	},
}

func initCase(code int, name string, sentinel func(*gpudrv.Errors) error) fakeCase {
	return fakeCase{
		name:  fmt.Sprintf("init_%d", code),
		setup: withOverride(nil, fmt.Sprintf("FAKE_INIT_RESULT=%d", code)),
		check: func(t *testing.T, h *Harness, b Backend) {
			reason := notAvailable(t, h, b, sentinel(h.Errs))
			assert.Contains(t, reason, h.ErrPrefix+name)
			assert.Contains(t, reason, fmt.Sprintf("(%d)", code))
			assert.Contains(t, reason, h.sym("Init")+"(0) failed: "+h.ErrPrefix+name)
			assert.Equal(t, 1, strings.Count(reason, h.Pkg+": "), "one package prefix: %s", reason)
			assert.Contains(t, reason, os.Getenv("FLAGOS_TEST_LIB"))
			// The version is readable without init.
			major, minor, err := b.DriverVersion()
			require.NoError(t, err)
			assert.Equal(t, h.Version, [2]int{major, minor})
			_, err = b.DeviceCount()
			var e *gpudrv.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, code, e.Code)
		},
	}
}
