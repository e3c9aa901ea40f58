package main

import (
	"errors"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/flagos-ai/flagshim/tier"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/hooks"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/plugins/nvshmem"
)

// TestForeignModules loads modules the way a host does (its own
// cuModuleLoadData on the fake libcuda, its context current) and hands
// them to the C interface's core: only the hooks whose scope matches run,
// unloading finalizes them, a failing hook is reported.
func TestForeignModules(t *testing.T) {
	if !dltest.IsChild(t) {
		if dltest.CC() == "" {
			t.Skip("no C compiler (go env CC) to build the fake libcuda")
		}
		cuda := buildFake(t, "cuda")
		dltest.MustChild(t, t.Name(), "FLAGOS_LIBCUDA_PATH="+cuda, "FLAGOS_PROBE=exact",
			"FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1")
		return
	}
	asCThread()
	var events []string
	remove, err := hooks.DefaultHooks.Register(hooks.Hook{
		Name:     "xy",
		Scope:    hooks.HasGlobals("x", "y"),
		Init:     func(m device.Module) error { events = append(events, "init "+m.Label()); return nil },
		Finalize: func(m device.Module) error { events = append(events, "fini "+m.Label()); return nil },
	})
	require.NoError(t, err)
	defer remove()

	b, f := vendorBackend("cuda")
	require.Equal(t, failNone, f, errorMessage())
	lib, err := purego.Dlopen(os.Getenv("FLAGOS_LIBCUDA_PATH"), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	load, err := purego.Dlsym(lib, "cuModuleLoadData")
	require.NoError(t, err)
	hostLoad := func(image string) uintptr {
		var h uintptr
		img := append([]byte(image), 0)
		r, _, _ := purego.SyscallN(load, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])))
		require.Zero(t, int32(r), "the host's own load")
		return h
	}

	require.NoError(t, b.WithContext(0, func() error {
		both := hostLoad("fake-module\nglobal x 4\nglobal y 4\n")
		plain := hostLoad("fake-module\nfunction k nop\n")
		partial := hostLoad("fake-module\nglobal x 4\n")

		names, f := moduleLoaded("cuda", both, "")
		assert.Equal(t, failNone, f, errorMessage())
		assert.Equal(t, []string{"xy"}, names)
		names, f = moduleLoaded("cuda", both, "")
		assert.Equal(t, []string{"xy"}, names, "a second call runs nothing and answers the same")
		assert.Equal(t, failNone, f)
		names, f = moduleLoaded("cuda", plain, "")
		assert.Equal(t, failNone, f, errorMessage())
		assert.Empty(t, names, "a plain module gets no hook")
		_, f = moduleLoaded("cuda", partial, "")
		assert.Equal(t, failHook, f)
		assert.Contains(t, errorMessage(), "only some of a hook's globals")
		assert.Equal(t, failNone, moduleUnloading("cuda", both))
		assert.Equal(t, failNone, moduleUnloading("cuda", plain), "never hooked: nothing to do")
		return nil
	}))
	assert.Equal(t, 2, len(events))
	assert.True(t, strings.HasPrefix(events[0], "init foreign#"), events)
	assert.True(t, strings.HasPrefix(events[1], "fini foreign#"), events)

	_, f = moduleLoaded("rocm", 1, "")
	assert.Equal(t, failBackend, f)
	assert.Contains(t, errorMessage(), "no driver backend \"rocm\"")
	_, f = moduleLoaded("cpu", 1, "")
	assert.Equal(t, failBackend, f)
	_ = tier.Exact
}

// asCThread keeps the calling goroutine on its thread for the rest of its
// life, as a C thread is: flagshim_error is the calling thread's last
// error, and a goroutine that moved between a call and errorMessage read
// another thread's (a -race run in CI read "" that way). The thread ends
// with the goroutine.
func asCThread() { runtime.LockOSThread() }

// TestForeignModuleOncePerLoad: 16 threads report one module at once, as a
// C host's threads do through flagshim_module_loaded: the hook (its init
// takes 20 ms) runs once, every caller waits for that run and gets its
// answer (the hook's name, or the same failure), and unloading finalizes it
// once.
func TestForeignModuleOncePerLoad(t *testing.T) {
	if !dltest.IsChild(t) {
		if dltest.CC() == "" {
			t.Skip("no C compiler (go env CC) to build the fake libcuda")
		}
		dltest.MustChild(t, t.Name(), "FLAGOS_LIBCUDA_PATH="+buildFake(t, "cuda"), "FLAGOS_PROBE=exact",
			"FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1")
		return
	}
	const callers = 16
	b, f := vendorBackend("cuda")
	require.Equal(t, failNone, f, errorMessage())
	lib, err := purego.Dlopen(os.Getenv("FLAGOS_LIBCUDA_PATH"), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	load, err := purego.Dlsym(lib, "cuModuleLoadData")
	require.NoError(t, err)

	for _, tt := range []struct {
		name    string
		initErr error
	}{
		{name: "init succeeds"},
		{name: "init fails", initErr: errors.New("nvshmemx_cumodule_init returned 7")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var inits, finis atomic.Int32
			var finished atomic.Bool
			remove, err := hooks.DefaultHooks.Register(hooks.Hook{
				Name:  "slow",
				Scope: hooks.AnyModule(),
				Init: func(device.Module) error {
					inits.Add(1)
					time.Sleep(20 * time.Millisecond)
					finished.Store(true)
					return tt.initErr
				},
				Finalize: func(device.Module) error { finis.Add(1); return nil },
			})
			require.NoError(t, err)
			defer remove()
			var h uintptr
			require.NoError(t, b.WithContext(0, func() error {
				img := append([]byte("fake-module\nglobal x 4\n"), 0)
				r, _, _ := purego.SyscallN(load, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])))
				require.Zero(t, int32(r), "the host's own load")
				return nil
			}))

			type answer struct {
				names []string
				f     failure
				msg   string
				early bool
			}
			answers := make([]answer, callers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					asCThread()
					<-start
					names, f := moduleLoaded("cuda", h, "")
					answers[i] = answer{names, f, errorMessage(), !finished.Load()}
				}()
			}
			close(start)
			wg.Wait()

			assert.Equal(t, int32(1), inits.Load(), "the hook ran once for the load")
			for i, a := range answers {
				assert.False(t, a.early, "caller %d returned before the hook's run was over", i)
				if tt.initErr == nil {
					assert.Equal(t, failNone, a.f, "caller %d: %s", i, a.msg)
					assert.Equal(t, []string{"slow"}, a.names, "caller %d gets the run's answer", i)
					continue
				}
				assert.Equal(t, failHook, a.f, "caller %d gets the run's failure", i)
				assert.Contains(t, a.msg, "nvshmemx_cumodule_init returned 7", "caller %d", i)
			}
			assert.Equal(t, failNone, moduleUnloading("cuda", h))
			assert.Equal(t, failNone, moduleUnloading("cuda", h), "a second unloading does nothing")
			if tt.initErr == nil {
				assert.Equal(t, int32(1), finis.Load(), "finalized once")
			} else {
				assert.Zero(t, finis.Load(), "a failed hook is not finalized")
			}
		})
	}
}

// TestNVSHMEMHook: the C interface's NVSHMEM plugin on the fake NVSHMEM and
// libcuda: initialized for one PE (or attached to the host's), its hook runs
// nvshmemx_cumodule_init on a module with NVSHMEM's globals only.
func TestNVSHMEMHook(t *testing.T) {
	if !dltest.IsChild(t) {
		if dltest.CC() == "" {
			t.Skip("no C compiler (go env CC) to build the fakes")
		}
		dir := dltest.PrivateDir(t)
		cuda := vendorstest.Driver(t, cuda.Vendor(), dir)
		nvs := filepath.Join(dir, "libnvshmem_host.so.3")
		dltest.BuildLib(t, nvs, "libnvshmem_host.so.3", []string{dltest.Abs(t, "../../plugins/nvshmem/testdata/fake_nvshmem.c")},
			"-Wl,--no-as-needed", "-L"+dir, "-l:libcuda.so.1", "-Wl,-rpath,"+dir)
		env := []string{"FLAGOS_LIBCUDA_PATH=" + cuda, "FLAGOS_LIBNVSHMEM_PATH=" + nvs, "FLAGOS_PROBE=exact", "FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1"}
		dltest.MustChild(t, t.Name(), append(env, "NVS_CASE=init")...)
		dltest.MustChild(t, t.Name(), append(env, "NVS_CASE=attach")...)
		return
	}
	asCThread()
	if os.Getenv("NVS_CASE") == "attach" {
		assert.Equal(t, failNVSHMEM, nvshmemEnable(0, false), "nothing loaded NVSHMEM yet")
		assert.Contains(t, errorMessage(), "not loaded")
		// The host brings NVSHMEM up itself, then flagshim attaches.
		host, err := nvshmem.Open()
		require.NoError(t, err)
		uid, err := host.GetUniqueID()
		require.NoError(t, err)
		require.NoError(t, host.InitUniqueID(0, 1, uid))
	}
	init := os.Getenv("NVS_CASE") == "init"
	require.Equal(t, failNone, nvshmemEnable(0, init), errorMessage())
	require.Equal(t, failNone, nvshmemEnable(0, init), "a second call does nothing")

	b, f := vendorBackend("cuda")
	require.Equal(t, failNone, f)
	lib, err := purego.Dlopen(os.Getenv("FLAGOS_LIBCUDA_PATH"), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	load, err := purego.Dlsym(lib, "cuModuleLoadData")
	require.NoError(t, err)
	require.NoError(t, b.WithContext(0, func() error {
		hostLoad := func(image string) uintptr {
			var h uintptr
			img := append([]byte(image), 0)
			r, _, _ := purego.SyscallN(load, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&img[0])))
			require.Zero(t, int32(r))
			return h
		}
		shmem := hostLoad("fake-module\nglobal nvshmemi_device_lib_version_d 4\nglobal nvshmemi_device_state_d 8\n")
		plain := hostLoad("fake-module\nfunction add add\n")
		names, f := moduleLoaded("cuda", shmem, "pe.cubin")
		assert.Equal(t, failNone, f, errorMessage())
		assert.Equal(t, []string{nvshmem.HookName}, names)
		names, f = moduleLoaded("cuda", plain, "add")
		assert.Equal(t, failNone, f, errorMessage())
		assert.Empty(t, names, "no NVSHMEM symbols: the hook does not run")
		assert.Equal(t, failNone, moduleUnloading("cuda", shmem))
		return nil
	}))
}
