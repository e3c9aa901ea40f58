package flagshim_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/cli"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/internal/onecpu"
)

// tierBackend is what a tier child saw of one backend.
type tierBackend struct {
	Available bool
	Devices   int
	Reason    string
	Tier      string
	// Child and ChildTook are the isolated tier's notes: why no child was
	// started, and how long the child took.
	Child, ChildTook string
}

// tierSeen is what a child saw of each vendor backend under a probe tier.
type tierSeen struct {
	InitErr     string
	Elapsed     time.Duration
	Probe       string
	Backends    map[string]tierBackend
	AliasActive bool
	ParseCUDA1  string
	AllocErr    string // an allocation on what cuda means, when asked (TIER_ALLOC)
	// LoggedAtInit is the fake log named by TIER_LOG_AT_INIT as it was when
	// Init returned, before the child asked any backend anything.
	LoggedAtInit []string
	// HelperAlive says whether the helper process the fake driver spawned
	// (FAKE_INIT_HELPER=TIER_HELPER) was still running once every backend
	// had answered.
	HelperAlive bool
	// ChildrenLeft is what WaitProbeChildren returned right after Init
	// with the wait TIER_WAIT_CHILDREN gives.
	ChildrenLeft int
	// CLIExit is cli.Run's status for the arguments in TIER_CLI (run before
	// Init, which then returns the CLI's report), and ChildrenAfterRun what
	// WaitProbeChildren(0) returned right after it.
	CLIExit, ChildrenAfterRun int
	// CPUs is how many CPUs the process may run on once everything was
	// asked (internal/onecpu.Count).
	CPUs int
	// FreeMemory and MemInfoErr are cuda's MemInfo(0) (TIER_MEMINFO), asked
	// after everything else.
	FreeMemory uint64
	MemInfoErr string
}

// TestTierChild runs Init under the environment its parent chose and
// writes what it saw.
func TestTierChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as the child process of the tier tests")
	}
	var seen tierSeen
	start := time.Now()
	var opts []flagshim.Option
	if os.Getenv("TIER_EVERY") != "" {
		opts = append(opts, flagshim.WithEveryProbe())
	}
	if os.Getenv("TIER_FREE_MEMORY") != "" {
		opts = append(opts, flagshim.WithFreeMemory())
	}
	if os.Getenv("TIER_ONE_CPU") != "" {
		opts = append(opts, flagshim.WithOneCPU())
	}
	if typ := os.Getenv("TIER_LATE_BACKEND"); typ != "" {
		// A plugin's driver step that registers its backend a while after
		// the built-in ones (whose probes WithEveryProbe has started).
		require.NoError(t, flagshim.AddStep(flagshim.PhaseDrivers, "late", func(context.Context) error {
			time.Sleep(300 * time.Millisecond)
			return device.Default.Register(devicetest.New(devicetest.Config{Type: device.Type(typ), Devices: make([]devicetest.Device, 2)}))
		}))
	}
	if args := os.Getenv("TIER_CLI"); args != "" {
		seen.CLIExit = cli.Run(strings.Fields(args), io.Discard, io.Discard)
		seen.ChildrenAfterRun = flagshim.WaitProbeChildren(0)
	}
	rep, err := flagshim.Init(context.Background(), opts...)
	seen.Elapsed = time.Since(start)
	wait := os.Getenv("TIER_WAIT_CHILDREN")
	if err != nil {
		seen.InitErr = err.Error()
	}
	if p := os.Getenv("TIER_LOG_AT_INIT"); p != "" {
		if b, err := os.ReadFile(p); err == nil {
			seen.LoggedAtInit = strings.Fields(string(b))
		}
	}
	if rep != nil {
		seen.Probe = string(rep.Probe)
		seen.AliasActive = rep.Alias.Active
	}
	seen.Backends = map[string]tierBackend{}
	for _, b := range device.Default.Backends() {
		r := b.Available()
		tb := tierBackend{Available: r.Available, Devices: r.Devices, Reason: r.Reason}
		if d, ok := b.(device.Describer); ok {
			x := d.Describe().Extra
			tb.Tier, tb.Child, tb.ChildTook = x["tier"], x["isolated.child"], x["isolated.duration"]
		}
		seen.Backends[string(b.Type())] = tb
	}
	if d, err := device.Parse("cuda:1"); err == nil {
		seen.ParseCUDA1 = d.String()
	}
	if p := os.Getenv("TIER_HELPER"); p != "" {
		// Started (its pid file is there) and not yet gone (it writes
		// .exited last): a zombie nobody reaped would still answer kill 0.
		_, started := os.Stat(p + ".pid")
		_, exited := os.Stat(p + ".exited")
		seen.HelperAlive = started == nil && errors.Is(exited, os.ErrNotExist)
	}
	if wait != "" {
		d, err := time.ParseDuration(wait)
		require.NoError(t, err)
		seen.ChildrenLeft = flagshim.WaitProbeChildren(d)
	}
	if os.Getenv("TIER_MEMINFO") != "" {
		seen.MemInfoErr = "no memory interface"
		if b, err := device.Lookup(device.CUDA); err == nil {
			if m, err := device.MemoryOf(b); err == nil {
				free, _, err := m.MemInfo(0)
				seen.FreeMemory, seen.MemInfoErr = free, ""
				if err != nil {
					seen.MemInfoErr = err.Error()
				}
			}
		}
	}
	if os.Getenv("TIER_ALLOC") != "" {
		if b, err := device.Lookup(device.CUDA); err == nil {
			if m, err := device.MemoryOf(b); err == nil {
				if _, err := m.Alloc(0, 64); err != nil {
					seen.AllocErr = err.Error()
				}
			}
		}
	}
	seen.CPUs, err = onecpu.Count()
	require.NoError(t, err)
	raw, err := json.Marshal(seen)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv("TIER_OUT"), raw, 0o600))
}

func runTier(t *testing.T, env ...string) (tierSeen, []string) {
	t.Helper()
	buildFakes(t)
	dir := dltest.PrivateDir(t)
	out, logf := filepath.Join(dir, "seen.json"), filepath.Join(dir, "fake.log")
	env = append([]string{"TIER_OUT=" + out, "FAKE_LOG=" + logf,
		"FLAGOS_LIBNVML_PATH=" + filepath.Join(fakes.missing, "libnvidia-ml.so.1"),
		"FLAGOS_LIBMTML_PATH=" + filepath.Join(fakes.missing, "libmtml.so")}, env...)
	dltest.MustChild(t, "TestTierChild", env...)
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	var seen tierSeen
	require.NoError(t, json.Unmarshal(raw, &seen))
	b, err := os.ReadFile(logf)
	if errors.Is(err, os.ErrNotExist) {
		return seen, nil
	}
	require.NoError(t, err)
	return seen, strings.Fields(string(b))
}

// fakeHelper returns the prefix of the files of the helper process a fake
// driver spawns (FAKE_<VENDOR>_INIT_HELPER): in a private folder that the
// test's cleanup removes only after it has released the helper and seen it
// go (the helper writes <prefix>.exited last).
func fakeHelper(t *testing.T) string {
	helper := filepath.Join(dltest.PrivateDir(t), "helper")
	t.Cleanup(func() {
		if _, err := os.Stat(helper + ".pid"); err != nil {
			return // never started
		}
		_ = os.WriteFile(helper+".release", nil, 0o600)
		for range 5000 {
			if _, err := os.Stat(helper + ".exited"); err == nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Errorf("the fake driver's helper did not exit within 5 s of its release")
	})
	return helper
}

// TestOneCPU: a process that initializes a driver and exits keeps to one
// CPU there (WithOneCPU in the exact tier, the CLI, the isolated child), and
// only there.
func TestOneCPU(t *testing.T) {
	buildFakes(t) // skips, saying why, without a C compiler
	all, err := onecpu.Count()
	require.NoError(t, err)
	if all < 2 {
		t.Skipf("this machine lets the test run on %d CPU: one CPU or all of them look the same", all)
	}
	cpusAtInit := func(t *testing.T, env ...string) (tierSeen, int) {
		t.Helper()
		file := filepath.Join(dltest.PrivateDir(t), "cpus")
		seen, _ := runTier(t, append([]string{"FLAGOS_LIBCUDA_PATH=" + fakes.cuda, "FAKE_CUDA_INIT_CPUS=" + file}, env...)...)
		require.Empty(t, seen.InitErr)
		raw, err := os.ReadFile(file)
		require.NoError(t, err, "the fake's cuInit ran")
		n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		require.NoError(t, err)
		return seen, n
	}
	t.Run("exact with WithOneCPU: cuInit runs on one CPU and the process stays there", func(t *testing.T) {
		seen, n := cpusAtInit(t, "FLAGOS_PROBE=exact", "TIER_ONE_CPU=1")
		assert.Equal(t, 1, n)
		assert.Equal(t, 1, seen.CPUs)
	})
	t.Run("presence with WithOneCPU: the process is left as it was", func(t *testing.T) {
		seen, _ := runTier(t, "FLAGOS_PROBE=presence", "FLAGOS_LIBCUDA_PATH="+fakes.cuda, "TIER_ONE_CPU=1")
		require.Empty(t, seen.InitErr)
		assert.Equal(t, all, seen.CPUs)
	})
	t.Run("exact without it: the process is left as it was", func(t *testing.T) {
		seen, n := cpusAtInit(t, "FLAGOS_PROBE=exact")
		assert.Equal(t, all, n)
		assert.Equal(t, all, seen.CPUs)
	})
	t.Run("isolated: the child keeps to one CPU, the parent is left as it was", func(t *testing.T) {
		for _, env := range [][]string{{"FLAGOS_PROBE=isolated"}, {"FLAGOS_PROBE=isolated", "TIER_ONE_CPU=1"}} {
			seen, n := cpusAtInit(t, env...)
			assert.Equal(t, 1, n, "%v: the child's cuInit", env)
			assert.Equal(t, all, seen.CPUs, "%v: the parent", env)
			assert.True(t, seen.Backends["cuda"].Available, seen.Backends["cuda"].Reason)
		}
	})
	t.Run("the CLI asks for it", func(t *testing.T) {
		seen, n := cpusAtInit(t, "TIER_CLI=info --probe exact")
		assert.Equal(t, 0, seen.CLIExit)
		assert.Equal(t, 1, n)
	})
}

func TestProbeTiers(t *testing.T) {
	buildFakes(t) // skips, saying why, without a C compiler
	withMUSA := func(env ...string) []string {
		return append([]string{"FLAGOS_LIBMUSA_PATH=" + fakes.musa, "FLAGOS_LIBCUDA_PATH=" + filepath.Join(fakes.missing, "libcuda.so.1")}, env...)
	}

	t.Run("exact initializes the driver in the process", func(t *testing.T) {
		seen, log := runTier(t, withMUSA("FLAGOS_PROBE=exact")...)
		require.Empty(t, seen.InitErr)
		assert.Equal(t, "exact", seen.Probe)
		assert.True(t, seen.Backends["musa"].Available)
		assert.Equal(t, "exact", seen.Backends["musa"].Tier)
		assert.Contains(t, log, "init", "muInit ran in the process")
		assert.True(t, seen.AliasActive)
	})
	t.Run("exact with CUDA present opens no other vendor's library in Init", func(t *testing.T) {
		// The alias asks cuda first; flagos's route (musa, hip, ...) is
		// decided only where there is no usable CUDA. Validating
		// FLAGOS_BACKEND must not decide it either.
		others := filepath.Join(dltest.PrivateDir(t), "others.log")
		seen, _ := runTier(t, "FLAGOS_PROBE=exact", "FLAGOS_LIBCUDA_PATH="+fakes.cuda,
			"FLAGOS_LIBMUSA_PATH="+fakes.musa, "FLAGOS_LIBHIP_PATH="+fakes.hip,
			"FAKE_MUSA_LOG="+others, "FAKE_HIP_LOG="+others, "TIER_LOG_AT_INIT="+others)
		require.Empty(t, seen.InitErr)
		assert.True(t, seen.Backends["cuda"].Available, seen.Backends["cuda"].Reason)
		assert.False(t, seen.AliasActive)
		assert.Empty(t, seen.LoggedAtInit, "Init opened musa's or hip's library although CUDA answered")
		assert.True(t, seen.Backends["musa"].Available, "asked later, musa still answers")
	})
	t.Run("every probe at once: the drivers initialize concurrently", func(t *testing.T) {
		// cuda's fake init waits until hip's has run: asked one after the
		// other (cuda first, as the alias does), cuda would fail after 10 s.
		hipLog := filepath.Join(dltest.PrivateDir(t), "hip.log")
		seen, _ := runTier(t, "FLAGOS_PROBE=exact", "TIER_EVERY=1", "FLAGOS_LIBCUDA_PATH="+fakes.cuda,
			"FLAGOS_LIBMUSA_PATH="+fakes.musa, "FLAGOS_LIBHIP_PATH="+fakes.hip,
			"FAKE_HIP_LOG="+hipLog, "FAKE_CUDA_INIT_AWAIT="+hipLog)
		require.Empty(t, seen.InitErr)
		for _, vendor := range []string{"cuda", "musa", "hip"} {
			assert.True(t, seen.Backends[vendor].Available, "%s: %s", vendor, seen.Backends[vendor].Reason)
		}
		assert.False(t, seen.AliasActive)
	})
	t.Run("isolated takes the answer without waiting for what the driver left running", func(t *testing.T) {
		// The fake's cuInit forks a helper that keeps the probe child's
		// descriptors (its answer pipe and stderr) until released, as a
		// runtime's daemon would: the answer must not wait for it, nor
		// for the child's own exit.
		helper := fakeHelper(t)
		seen, _ := runTier(t, "FLAGOS_PROBE=isolated", "FLAGOS_LIBCUDA_PATH="+fakes.cuda,
			"FAKE_CUDA_INIT_HELPER="+helper, "TIER_HELPER="+helper, "TIER_WAIT_CHILDREN=15s")
		require.Empty(t, seen.InitErr)
		assert.Equal(t, "isolated", seen.Probe)
		assert.True(t, seen.Backends["cuda"].Available, seen.Backends["cuda"].Reason)
		assert.Equal(t, 2, seen.Backends["cuda"].Devices)
		_, err := os.Stat(helper + ".pid")
		require.NoError(t, err, "the fake's init ran in the probe child and spawned its helper")
		assert.True(t, seen.HelperAlive, "the answer came only after the helper holding the child's descriptors exited")
		// The helper keeps the child's stderr for 20 s; reaping the child
		// does not wait for it (its stderr is read apart from its exit).
		assert.Zero(t, seen.ChildrenLeft, "WaitProbeChildren: a child stayed unreaped while its helper held stderr")
	})
	t.Run("the CLI returns only once its probe children are reaped", func(t *testing.T) {
		// The same helper keeps the child from being reaped for 2 s after
		// its answer (the case above): cli.Run waits for that.
		helper := fakeHelper(t)
		seen, _ := runTier(t, "FLAGOS_PROBE=isolated", "FLAGOS_LIBCUDA_PATH="+fakes.cuda,
			"FAKE_CUDA_INIT_HELPER="+helper, "TIER_CLI=info")
		assert.Equal(t, 0, seen.CLIExit)
		assert.Equal(t, "isolated", seen.Probe, "Init returned the report of the CLI's own Init")
		_, err := os.Stat(helper + ".pid")
		require.NoError(t, err, "the fake's init ran in the probe child and spawned its helper")
		assert.Zero(t, seen.ChildrenAfterRun, "a probe child outlived cli.Run")
	})
	t.Run("isolated: free memory is learned only when asked, from the management library", func(t *testing.T) {
		inits := func(log []string) int {
			n := 0
			for _, l := range log {
				if l == "init" {
					n++
				}
			}
			return n
		}
		// It is learned from the management library (NVML: the fake says
		// 79 GiB free), asked by the supervisor while the child runs,
		// never by making a context per device.
		seen, log := runTier(t, "FLAGOS_PROBE=isolated", "FLAGOS_LIBCUDA_PATH="+fakes.cuda, "FLAGOS_LIBNVML_PATH="+fakes.nvml, "TIER_FREE_MEMORY=1", "TIER_MEMINFO=1")
		require.Empty(t, seen.InitErr)
		require.Empty(t, seen.MemInfoErr)
		assert.Equal(t, uint64(79<<30), seen.FreeMemory, "NVML's answer, matched to the device by its PCI bus id")
		assert.Equal(t, 1, inits(log), "with WithFreeMemory the child's answer holds it: only the child ran cuInit")

		// Without it the child creates no context, and MemInfo says it was
		// not learned rather than initializing the driver here.
		seen, log = runTier(t, "FLAGOS_PROBE=isolated", "FLAGOS_LIBCUDA_PATH="+fakes.cuda, "TIER_MEMINFO=1")
		require.Empty(t, seen.InitErr)
		assert.Contains(t, seen.MemInfoErr, "did not learn device 0's free memory")
		assert.Zero(t, seen.FreeMemory)
		assert.Equal(t, 1, inits(log), "only the child ran cuInit")
	})
	t.Run("every probe at once: flagos routes to a backend a plugin registers later", func(t *testing.T) {
		// The late step sleeps so that a flagos probe started when flagos
		// registered would decide its route before "late" exists.
		seen, _ := runTier(t, "FLAGOS_PROBE=exact", "TIER_EVERY=1", "TIER_LATE_BACKEND=late", "FLAGOS_BACKEND=late",
			"FLAGOS_LIBCUDA_PATH="+filepath.Join(fakes.missing, "libcuda.so.1"))
		require.Empty(t, seen.InitErr)
		assert.True(t, seen.Backends["late"].Available, seen.Backends["late"].Reason)
		assert.True(t, seen.Backends["flagos"].Available, "flagos: %s", seen.Backends["flagos"].Reason)
		assert.Equal(t, 2, seen.Backends["flagos"].Devices)
		assert.True(t, seen.AliasActive, "no CUDA, and flagos has late's devices")
	})
	t.Run("presence never initializes a driver", func(t *testing.T) {
		// No MTML and no /dev/mtgpu* here: the presence tier finds no MUSA
		// device, says why, and still never runs muInit.
		seen, log := runTier(t, withMUSA("FLAGOS_PROBE=presence")...)
		require.Empty(t, seen.InitErr)
		assert.Equal(t, "presence", seen.Probe)
		assert.Equal(t, "presence", seen.Backends["musa"].Tier)
		assert.NotContains(t, log, "init", "no driver init in the process")
		assert.NotContains(t, log, "load", "the library was found and checked, never opened")
		assert.Contains(t, seen.Backends["musa"].Reason, "presence")
		assert.Contains(t, seen.Backends["musa"].Reason, "mtml")
	})
	t.Run("isolated: the exact answer from a child", func(t *testing.T) {
		seen, log := runTier(t, withMUSA("FLAGOS_PROBE=isolated")...)
		require.Empty(t, seen.InitErr)
		assert.Equal(t, "isolated", seen.Probe)
		assert.True(t, seen.Backends["musa"].Available, seen.Backends["musa"].Reason)
		assert.Equal(t, 2, seen.Backends["musa"].Devices)
		assert.Equal(t, "isolated", seen.Backends["musa"].Tier)
		assert.Equal(t, 1, countOf(log, "init"), "muInit ran once, in the probe's child: %v", log)
		assert.True(t, seen.AliasActive, "the alias decision reads the isolated answer")
		assert.Equal(t, "flagos:1", seen.ParseCUDA1)
	})
	t.Run("isolated: no child for a vendor whose library is not here", func(t *testing.T) {
		// cuda's library is missing: the parent knows the exact tier's
		// answer without running any driver code, so no child is started
		// for it; musa's library is there, and gets its child.
		seen, log := runTier(t, withMUSA("FLAGOS_PROBE=isolated")...)
		exact, _ := runTier(t, withMUSA("FLAGOS_PROBE=exact")...)
		cuda := seen.Backends["cuda"]
		assert.Equal(t, "isolated", cuda.Tier)
		assert.Contains(t, cuda.Child, "none: no code of the driver would run")
		assert.Empty(t, cuda.ChildTook, "no child ran for cuda")
		assert.Equal(t, exact.Backends["cuda"].Reason, cuda.Reason, "the answer is the exact tier's")
		assert.False(t, cuda.Available)
		musa := seen.Backends["musa"]
		assert.Empty(t, musa.Child)
		assert.NotEmpty(t, musa.ChildTook, "musa's answer came from its child")
		assert.True(t, musa.Available, musa.Reason)
		assert.Equal(t, 1, countOf(log, "init"), "muInit ran once, in musa's child")
	})
	t.Run("isolated: a driver that crashes in init", func(t *testing.T) {
		for _, c := range []struct{ crash, want string }{{"segv", "signal 11"}, {"abort", "signal 6"}} {
			seen, _ := runTier(t, withMUSA("FLAGOS_PROBE=isolated", "FAKE_MUSA_INIT_CRASH="+c.crash)...)
			require.Empty(t, seen.InitErr, "Init survives")
			m := seen.Backends["musa"]
			assert.False(t, m.Available)
			assert.Contains(t, m.Reason, "the driver crashed in muInit ("+c.want)
			assert.False(t, seen.AliasActive)
		}
	})
	t.Run("isolated: a driver that hangs in init", func(t *testing.T) {
		seen, _ := runTier(t, withMUSA("FLAGOS_PROBE=isolated", "FLAGOS_PROBE_TIMEOUT=300ms", "FAKE_MUSA_INIT_SLEEP_MS=20000")...)
		require.Empty(t, seen.InitErr)
		m := seen.Backends["musa"]
		assert.False(t, m.Available)
		// The step it hung in is asserted by the next case, whose timeout
		// leaves a child slow to start (-race, a loaded machine) the time to
		// reach muInit; 300ms may end before it does ("while loading its
		// driver"), as a CI run under -race showed.
		assert.Contains(t, m.Reason, "did not return within 300ms (FLAGOS_PROBE_TIMEOUT)")
		assert.Contains(t, m.Reason, "the probe's child was killed")
		assert.Less(t, seen.Elapsed, 15*time.Second, "Init did not wait for the driver")
	})
	t.Run("isolated: a child killed on the timeout is reaped although its helper holds its pipes", func(t *testing.T) {
		// The hung driver's helper holds the killed child's answer pipe and
		// stderr: neither Init nor the reaping waits for it (the child's
		// stderr is a pipe the supervisor reads apart from the child's exit).
		// The timeout must leave the child the time to reach muInit and
		// spawn the helper before it is killed: a second is plenty on an idle
		// machine; a slow one (-race, a loaded CI runner) gets longer ones.
		for _, timeout := range []string{"1s", "3s", "9s"} {
			helper := fakeHelper(t)
			seen, _ := runTier(t, withMUSA("FLAGOS_PROBE=isolated", "FLAGOS_PROBE_TIMEOUT="+timeout, "FAKE_MUSA_INIT_SLEEP_MS=20000",
				"FAKE_MUSA_INIT_HELPER="+helper, "TIER_HELPER="+helper, "TIER_WAIT_CHILDREN=15s")...)
			require.Empty(t, seen.InitErr)
			assert.Contains(t, seen.Backends["musa"].Reason, "did not return within "+timeout+" (FLAGOS_PROBE_TIMEOUT) in muInit")
			if _, err := os.Stat(helper + ".pid"); err != nil {
				t.Logf("FLAGOS_PROBE_TIMEOUT=%s: the child was killed before its driver's init spawned the helper; trying a longer timeout", timeout)
				continue
			}
			assert.Zero(t, seen.ChildrenLeft, "the killed child was never reaped")
			return
		}
		t.Fatal("the child was killed before its driver's init spawned the helper, even with a 9s timeout: this machine is too slow for the case")
	})
	t.Run("exact: a driver that hangs in init times out", func(t *testing.T) {
		seen, _ := runTier(t, withMUSA("FLAGOS_PROBE=exact", "FLAGOS_PROBE_TIMEOUT=300ms", "FAKE_MUSA_INIT_SLEEP_MS=20000")...)
		require.Empty(t, seen.InitErr)
		m := seen.Backends["musa"]
		assert.False(t, m.Available)
		assert.Contains(t, m.Reason, "muInit did not return within 300ms")
		assert.Less(t, seen.Elapsed, 15*time.Second)
	})
	t.Run("presence: a later exact call says what presence answered", func(t *testing.T) {
		seen, log := runTier(t, "FLAGOS_PROBE=presence", "FLAGOS_LIBCUDA_PATH="+fakes.cuda, "FAKE_CUDA_INIT_RESULT=100",
			"FLAGOS_LIBMUSA_PATH="+filepath.Join(fakes.missing, "libmusa.so.1"), "TIER_ALLOC=1")
		require.Empty(t, seen.InitErr)
		assert.Equal(t, "presence", seen.Backends["cuda"].Tier)
		if seen.Backends["cuda"].Available {
			t.Skip("this machine has NVIDIA device nodes: the presence tier found them; the case needs a machine without")
		}
		assert.Contains(t, seen.AllocErr, "the presence tier had answered")
		assert.Contains(t, seen.AllocErr, "FLAGOS_PROBE=exact")
		assert.Contains(t, seen.AllocErr, "CUDA_ERROR_NO_DEVICE", "the exact error, first")
		assert.Equal(t, 1, countOf(log, "init"), "the Alloc tried to initialize the driver, lazily: %v", log)
	})
}

func TestBadSettings(t *testing.T) {
	for _, c := range []struct{ kv, name string }{
		{"FLAGOS_PROBE=fast", "FLAGOS_PROBE"},
		{"FLAGOS_PROBE_TIMEOUT=soon", "FLAGOS_PROBE_TIMEOUT"},
		{"FLAGOS_PROBE_TIMEOUT=-1s", "FLAGOS_PROBE_TIMEOUT"},
		{"FLAGOS_LIBCUDA_PATH=lib/libcuda.so.1", "FLAGOS_LIBCUDA_PATH"},
		{"FLAGOS_LIBMUSA_PATH=./libmusa.so.1", "FLAGOS_LIBMUSA_PATH"},
		{"FLAGOS_LIBNVML_PATH=libnvidia-ml.so.1", "FLAGOS_LIBNVML_PATH"},
		{"FLAGOS_LIBNVSHMEM_PATH=x.so", "FLAGOS_LIBNVSHMEM_PATH"},
		{"FLAGOS_BACKEND=cpu", "FLAGOS_BACKEND"},
		{"FLAGOS_BACKEND=flagos", "FLAGOS_BACKEND"},
		{"FLAGOS_BACKEND=mu sa", "FLAGOS_BACKEND"},
		{"FLAGOS_BACKEND=junk", "FLAGOS_BACKEND"},
		{"FLAGOS_LOG=junk", "FLAGOS_LOG"},
		{"FLAGOS_ALIAS_CUDA=perhaps", "FLAGOS_ALIAS_CUDA"},
		{"FLAGOS_TRACE=verbose", "FLAGOS_TRACE"},
	} {
		t.Run(c.kv, func(t *testing.T) {
			seen, _ := runTier(t, c.kv)
			assert.Contains(t, seen.InitErr, c.name)
			assert.Contains(t, seen.InitErr, "invalid setting")
			assert.Empty(t, seen.ParseCUDA1, "device.Default does not answer under a bad setting")
		})
	}
}

func countOf(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}
