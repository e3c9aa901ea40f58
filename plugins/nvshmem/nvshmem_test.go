package nvshmem

import (
	"errors"
	"fmt"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// fakeModule is an in-memory device.Module.
type fakeModule struct {
	label   string
	backend device.Type
	handle  uintptr
	globals map[string]bool
}

func newModule(label string, handle uintptr, globals ...string) *fakeModule {
	m := &fakeModule{label: label, backend: device.CUDA, handle: handle, globals: map[string]bool{}}
	for _, g := range globals {
		m.globals[g] = true
	}
	return m
}

func (m *fakeModule) Backend() device.Type { return m.backend }
func (m *fakeModule) Handle() uintptr      { return m.handle }
func (m *fakeModule) Label() string        { return m.label }
func (m *fakeModule) Global(name string) (uintptr, uint64, bool, error) {
	return 0x100, 8, m.globals[name], nil
}

// TestLayout pins the structs to the numbers read from NVSHMEM 3.4.5's
// headers and printed by testdata/native_check.cu on the H200.
func TestLayout(t *testing.T) {
	var a initAttr
	tests := []struct {
		name string
		got  uintptr
		want uintptr
	}{
		{"sizeof uniqueid", unsafe.Sizeof(UniqueID{}), 128},
		{"sizeof uniqueid_args", unsafe.Sizeof(uniqueIDArgs{}), 24},
		{"sizeof init_args", unsafe.Sizeof(initArgs{}), 128},
		{"sizeof init_attr", unsafe.Sizeof(initAttr{}), 144},
		{"offsetof mpi_comm", unsafe.Offsetof(a.mpiComm), 8},
		{"offsetof args", unsafe.Offsetof(a.args), 16},
		{"offsetof args.uid_args", unsafe.Offsetof(a.args) + unsafe.Offsetof(a.args.uidArgs), 24},
		{"offsetof uid_args.id", unsafe.Offsetof(a.args) + unsafe.Offsetof(a.args.uidArgs) + unsafe.Offsetof(a.args.uidArgs.id), 32},
		{"offsetof uid_args.myrank", unsafe.Offsetof(a.args) + unsafe.Offsetof(a.args.uidArgs) + unsafe.Offsetof(a.args.uidArgs.myrank), 40},
		{"offsetof uid_args.nranks", unsafe.Offsetof(a.args) + unsafe.Offsetof(a.args.uidArgs) + unsafe.Offsetof(a.args.uidArgs.nranks), 44},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.got, tt.name)
	}
	// NVSHMEMX_INIT_ATTR_INITIALIZER as dumped by native_check (padding aside).
	attr := newInitAttr()
	b := unsafe.Slice((*byte)(unsafe.Pointer(attr)), 144)
	assert.Equal(t, []byte{0x90, 0, 1, 0}, b[0:4])
	assert.Equal(t, []byte{0x80, 0, 1, 0}, b[16:20])
	assert.Equal(t, []byte{0x18, 0, 1, 0}, b[24:28])
	assert.Equal(t, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, b[40:48])
	assert.Equal(t, make([]byte, 8), b[8:16], "mpi_comm NULL")
	assert.Equal(t, make([]byte, 96), b[48:144])
	uid := newUniqueID()
	assert.Equal(t, []byte{0x80, 0, 1, 0}, uid[0:4])
	assert.Equal(t, make([]byte, 124), uid[4:])
	assert.Equal(t, 8, initWithUniqueID)
}

func TestStatus(t *testing.T) {
	tests := []struct {
		s    Status
		name string
		init bool
	}{
		{StatusNotInitialized, "NVSHMEM_STATUS_NOT_INITIALIZED", false},
		{StatusBootstrapped, "NVSHMEM_STATUS_IS_BOOTSTRAPPED", false},
		{StatusInitialized, "NVSHMEM_STATUS_IS_INITIALIZED", true},
		{StatusLimitedMPG, "NVSHMEM_STATUS_LIMITED_MPG", true},
		{StatusFullMPG, "NVSHMEM_STATUS_FULL_MPG", true},
		{StatusInvalid, "NVSHMEM_STATUS_INVALID", false},
		{Status(9), "NVSHMEM_STATUS(9)", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.name, tt.s.String())
		assert.Equal(t, tt.init, tt.s.Initialized(), tt.name)
	}
	e := codes.Check("nvshmemx_cumodule_init", 7)
	assert.ErrorIs(t, e, ErrCall)
	var ce *clib.Error
	require.ErrorAs(t, e, &ce)
	assert.Equal(t, "nvshmem: nvshmemx_cumodule_init returned NVSHMEMX_ERROR_INTERNAL (7)", e.Error())
	assert.Contains(t, codes.Check("f", 42).Error(), "unknown code (42)")
	assert.ErrorIs(t, codes.Check("f", 42), ErrCall, "every status matches ErrCall")
	assert.NoError(t, codes.Check("f", 0))
}

// TestScope: the hook applies to modules with both globals, not to those
// with neither, and fails those with one of them.
func TestScope(t *testing.T) {
	l := &Lib{} // the scope never calls into the library
	hk := l.Hook()
	assert.Equal(t, HookName, hk.Name)
	require.NotNil(t, hk.Init)
	require.NotNil(t, hk.Finalize)
	tests := []struct {
		name    string
		globals []string
		want    bool
		wantErr bool
	}{
		{"both", []string{VersionGlobal, StateGlobal, "other"}, true, false},
		{"neither", []string{"add"}, false, false},
		{"version only", []string{VersionGlobal}, false, true},
		{"state only", []string{StateGlobal}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hk.Scope(newModule("m.cubin", 2, tt.globals...))
			assert.Equal(t, tt.want, got)
			if !tt.wantErr {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, hooks.ErrPartialGlobals)
			assert.Contains(t, err.Error(), VersionGlobal)
			assert.Contains(t, err.Error(), StateGlobal)
			assert.Contains(t, err.Error(), "m.cubin")
		})
	}
}

// TestWrongBackend: the hook refuses a MUSA module before touching anything.
func TestWrongBackend(t *testing.T) {
	l := &Lib{}
	m := newModule("k.mubin", 2, VersionGlobal, StateGlobal)
	m.backend = device.MUSA
	err := l.Hook().Init(m)
	require.ErrorIs(t, err, ErrWrongBackend)
	assert.Contains(t, err.Error(), "k.mubin")
}

func TestWheelDirs(t *testing.T) {
	env := map[string]string{"VIRTUAL_ENV": "/venv", "CONDA_PREFIX": "relative/conda", "HOME": "/home/u"}
	dirs := wheelDirs(func(k string) string { return env[k] })
	assert.Equal(t, []string{
		"/venv/lib/python3*/site-packages/nvidia/nvshmem/lib",
		"/venv/lib/python3*/dist-packages/nvidia/nvshmem/lib",
		"/home/u/.local/lib/python3*/site-packages/nvidia/nvshmem/lib",
		"/home/u/.local/lib/python3*/dist-packages/nvidia/nvshmem/lib",
		"/usr/local/lib/python3*/site-packages/nvidia/nvshmem/lib",
		"/usr/local/lib/python3*/dist-packages/nvidia/nvshmem/lib",
		"/usr/lib/python3/dist-packages/nvidia/nvshmem/lib",
		"/usr/lib/python3*/site-packages/nvidia/nvshmem/lib",
		"/usr/lib/python3*/dist-packages/nvidia/nvshmem/lib",
		"/opt/conda/lib/python3*/site-packages/nvidia/nvshmem/lib",
		"/opt/conda/lib/python3*/dist-packages/nvidia/nvshmem/lib",
	}, dirs, "a relative CONDA_PREFIX is ignored")
	for _, d := range dirs {
		assert.True(t, filepath.IsAbs(d), d)
	}
}

func TestOpenErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), Soname)
	tests := []struct {
		name    string
		env     map[string]string
		wantIs  error
		wantMsg []string
	}{
		{"relative override", map[string]string{EnvVar: "lib/" + Soname}, clib.ErrRelativeOverride, []string{EnvVar, "absolute"}},
		{"override missing", map[string]string{EnvVar: missing}, dl.ErrOpen, []string{EnvVar, missing}},
		{"nothing found", map[string]string{"HOME": t.TempDir()}, ErrNotFound, []string{Soname, EnvVar, "pip install nvidia-nvshmem"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantIs == ErrNotFound {
				if _, err := purego.Dlopen(Soname, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
					t.Skipf("this machine has %s on the loader path; the not-found case cannot be shown here", Soname)
				}
			}
			l, err := Open(WithGetenv(func(k string) string { return tt.env[k] }))
			require.Error(t, err)
			assert.Nil(t, l)
			assert.ErrorIs(t, err, tt.wantIs)
			for _, s := range tt.wantMsg {
				assert.Contains(t, err.Error(), s)
			}
		})
	}
	_, err := Open(WithDevice(-1))
	assert.ErrorIs(t, err, ErrInvalid)
}

// buildFakes builds the fake libcuda.so.1 (the drivers' fake) and libnvshmem_host.so.3 into a
// private folder and returns the child environment that selects them.
func buildFakes(t *testing.T) []string {
	t.Helper()
	dir := dltest.PrivateDir(t)
	cuda := vendorstest.Driver(t, cuda.Vendor(), dir) // libcuda.so.1, with fake_current_ordinal
	nvshmem := filepath.Join(dir, Soname)
	dltest.BuildLib(t, nvshmem, Soname, []string{dltest.Abs(t, "testdata/fake_nvshmem.c")},
		"-Wl,--no-as-needed", "-L"+dir, "-l:libcuda.so.1", "-Wl,-rpath,"+dir)
	return []string{EnvVar + "=" + nvshmem, "FLAGOS_LIBCUDA_PATH=" + cuda}
}

// counts reads the fake's counters: cumodule inits, finalizes, host
// finalizes, concurrent calls, calls without a current context.
func counts(t *testing.T, l *Lib) [5]int32 {
	t.Helper()
	var fn clib.Func
	require.NoError(t, l.h.Resolve("fake nvshmem", []clib.Sym{{Fn: &fn, Names: []string{"fake_nvshmem_counts"}, Required: true, Sig: "p"}}))
	var c [5]int32
	fn.Call(uintptr(unsafe.Pointer(&c[0])))
	return c
}

// TestFakeLibrary runs the plugin against the fake library in a child
// process: open through the override, unique-id init, the hook on plain,
// NVSHMEM and half modules, serialisation, finalize.
func TestFakeLibrary(t *testing.T) {
	if !dltest.IsChild(t) {
		out := dltest.MustChild(t, t.Name(), buildFakes(t)...)
		// Only the control call prints NVSHMEM's complaint: the plain
		// module's load never reached nvshmemx_cumodule_init.
		before, after, ok := strings.Cut(out, "CONTROL-START")
		require.True(t, ok, out)
		assert.NotContains(t, before, "named symbol not found")
		assert.Equal(t, 1, strings.Count(after, "named symbol not found"), out)
		return
	}
	l, err := Open()
	require.NoError(t, err)
	assert.Equal(t, os.Getenv(EnvVar), l.Path)
	require.Len(t, l.Attempts, 1)
	major, minor, patch, ok := l.Version()
	assert.True(t, ok)
	assert.Equal(t, [3]int{3, 4, 5}, [3]int{major, minor, patch})

	hs := hooks.NewHooks()
	remove, err := l.Register(hs)
	require.NoError(t, err)
	nv := newModule("pe.cubin", 0x1000, VersionGlobal, StateGlobal)

	// Before init: the hook fails the NVSHMEM module's load with a clear error.
	assert.Equal(t, StatusNotInitialized, l.InitStatus())
	err = hs.Apply(nv)
	require.ErrorIs(t, err, ErrNotInitialized)
	require.ErrorIs(t, err, hooks.ErrHookFailed)
	assert.Contains(t, err.Error(), `hook "nvshmem"`)
	assert.Contains(t, err.Error(), "InitUniqueID")
	assert.Nil(t, hs.Applied(nv))

	for _, bad := range [][2]int{{0, 0}, {-1, 1}, {1, 1}} {
		assert.ErrorIs(t, l.InitUniqueID(bad[0], bad[1], UniqueID{}), ErrInvalid, "rank %d of %d", bad[0], bad[1])
	}
	uid, err := l.GetUniqueID()
	require.NoError(t, err)
	assert.Equal(t, byte(0x5a), uid[4])
	require.NoError(t, l.InitUniqueID(0, 1, uid))
	assert.Equal(t, StatusInitialized, l.InitStatus())
	assert.Equal(t, 0, l.MyPE())
	assert.Equal(t, 1, l.NPEs())
	assert.ErrorIs(t, l.InitUniqueID(0, 1, uid), ErrAlreadyInit)

	// The plain module: hook not called (the fake would print and count).
	plain := newModule("add.ptx", 0x2001, "add")
	require.NoError(t, hs.Apply(plain))
	assert.Nil(t, hs.Applied(plain))
	// The control: cumodule_init on it directly returns 7.
	fmt.Fprintln(os.Stderr, "CONTROL-START")
	rc, err := l.CumoduleInit(plain.handle)
	require.NoError(t, err)
	assert.Equal(t, 7, rc)

	// The NVSHMEM module: initialized, finalized on release.
	require.NoError(t, hs.Apply(nv))
	assert.Equal(t, []string{HookName}, hs.Applied(nv))
	require.NoError(t, hs.Release(nv))
	c := counts(t, l)
	assert.Equal(t, [5]int32{1, 1, 0, 0, 0}, c)

	// A half module fails its load and names both globals.
	half := newModule("half.cubin", 0x3000, StateGlobal)
	err = hs.Apply(half)
	require.ErrorIs(t, err, hooks.ErrPartialGlobals)
	assert.Contains(t, err.Error(), VersionGlobal)

	// Many modules in parallel: calls into the library never overlap.
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := newModule(fmt.Sprint("m", i), uintptr(0x10000+i*16), VersionGlobal, StateGlobal)
			assert.NoError(t, hs.Apply(m))
			assert.NoError(t, hs.Release(m))
		}()
	}
	wg.Wait()
	c = counts(t, l)
	assert.Equal(t, [5]int32{33, 33, 0, 0, 0}, c, "inits, finalizes, host finalizes, concurrent calls, calls without a context")

	// Finalize removes the hook, finalizing the live module first.
	live := newModule("live.cubin", 0x4000, VersionGlobal, StateGlobal)
	require.NoError(t, hs.Apply(live))
	require.NoError(t, l.Finalize())
	assert.Empty(t, hs.Names())
	assert.Nil(t, hs.Applied(live))
	c = counts(t, l)
	assert.Equal(t, [5]int32{34, 34, 1, 0, 0}, c)
	require.NoError(t, remove(), "remove after Finalize is a no-op")
	require.NoError(t, l.Finalize(), "second Finalize is a no-op")
	_, err = l.GetUniqueID()
	assert.ErrorIs(t, err, ErrFinalized)
	assert.ErrorIs(t, l.InitUniqueID(0, 1, uid), ErrFinalized)
}

// TestFakeInitFailures: a failing init and an init that only bootstraps are
// errors that say so.
func TestFakeInitFailures(t *testing.T) {
	if !dltest.IsChild(t) {
		env := buildFakes(t)
		for _, tc := range []struct{ env, want string }{
			{"FAKE_NVSHMEM_INIT_RC=7", "nvshmemx_hostlib_init_attr returned NVSHMEMX_ERROR_INTERNAL (7)"},
			{"FAKE_NVSHMEM_STATUS_AFTER_INIT=1", "NVSHMEM_STATUS_IS_BOOTSTRAPPED"},
		} {
			out := dltest.MustChild(t, t.Name(), append(env, tc.env, "WANT="+tc.want)...)
			assert.Contains(t, out, "init error: ")
		}
		return
	}
	l, err := Open()
	require.NoError(t, err)
	uid, err := l.GetUniqueID()
	require.NoError(t, err)
	err = l.InitUniqueID(0, 1, uid)
	require.Error(t, err)
	t.Logf("init error: %v", err)
	assert.Contains(t, err.Error(), os.Getenv("WANT"))
	assert.True(t, errors.Is(err, ErrCall) || errors.Is(err, ErrNotInitialized))
	hs := hooks.NewHooks()
	_, err = l.Register(hs)
	require.NoError(t, err)
	err = hs.Apply(newModule("pe.cubin", 0x1000, VersionGlobal, StateGlobal))
	assert.ErrorIs(t, err, ErrNotInitialized)
	assert.True(t, strings.Contains(err.Error(), "pe.cubin"))
}

// TestWheelSearch: with no override and the soname not on the loader path,
// Open finds the wheel under $VIRTUAL_ENV, after trying the soname.
func TestWheelSearch(t *testing.T) {
	if !dltest.IsChild(t) {
		if _, err := purego.Dlopen(Soname, purego.RTLD_NOW|purego.RTLD_LOCAL); err == nil {
			t.Skipf("this machine has %s on the loader path, which the search tries first", Soname)
		}
		env := buildFakes(t)
		venv := dltest.PrivateDir(t)
		lib := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "nvshmem", "lib")
		require.NoError(t, os.MkdirAll(lib, 0o755))
		src := strings.TrimPrefix(env[0], EnvVar+"=")
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(lib, Soname), data, 0o755))
		dltest.MustChild(t, t.Name(), env[1], "VIRTUAL_ENV="+venv, "WANT="+filepath.Join(lib, Soname))
		return
	}
	l, err := Open()
	require.NoError(t, err)
	assert.Equal(t, os.Getenv("WANT"), l.Path)
	require.GreaterOrEqual(t, len(l.Attempts), 2)
	assert.Equal(t, Soname, l.Attempts[0].Path)
	assert.NotEmpty(t, l.Attempts[0].Error)
	assert.Empty(t, l.Attempts[len(l.Attempts)-1].Error)
}
