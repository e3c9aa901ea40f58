package alias

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

type stubBackend struct {
	typ device.Type
	n   int
}

func (s stubBackend) Type() device.Type { return s.typ }
func (s stubBackend) Available() probe.Result {
	return probe.Result{Available: s.n > 0, Devices: s.n, Reason: string(s.typ) + " stub"}
}
func (s stubBackend) DeviceCount() (int, error)                 { return s.n, nil }
func (s stubBackend) Current() (int, error)                     { return 0, nil }
func (s stubBackend) SetCurrent(int) error                      { return nil }
func (s stubBackend) Synchronize(int) error                     { return nil }
func (s stubBackend) Properties(int) (device.Properties, error) { return device.Properties{}, nil }

var (
	noCUDA   = probe.Result{Reason: "libcuda.so.1: cannot open shared object file"}
	stubCUDA = probe.Result{Reason: "CUDA_ERROR_STUB_LIBRARY (34) from /usr/lib/stubs/libcuda.so"}
	zeroCUDA = probe.Result{Available: true, Devices: 0, Reason: "0 devices"}
	realCUDA = probe.Result{Available: true, Devices: 8, Reason: "8 devices"}
	flagos2  = probe.Result{Available: true, Devices: 2, Reason: "routes to musa"}
	flagos0  = probe.Result{Reason: "no vendor backend is available"}
)

func registries(t testing.TB, cuda, flagos probe.Result) (*device.Registry, *probe.Registry) {
	p := probe.New()
	require.NoError(t, p.Register("cuda", func() probe.Result { return cuda }))
	require.NoError(t, p.Register("flagos", func() probe.Result { return flagos }))
	d := device.NewRegistry()
	require.NoError(t, d.Register(stubBackend{device.CUDA, cuda.Devices}))
	require.NoError(t, d.Register(stubBackend{device.FlagOS, flagos.Devices}))
	return d, p
}

func TestDecide(t *testing.T) {
	tests := []struct {
		name         string
		cuda, flagos probe.Result
		env          string
		active       bool
		reason       []string
	}{
		{"no libcuda, flagos present", noCUDA, flagos2, "", true,
			[]string{"no usable CUDA runtime (libcuda.so.1: cannot open", "cuda now means flagos (2 devices)", "set FLAGOS_ALIAS_CUDA=0"}},
		{"stub libcuda", stubCUDA, flagos2, "1", true, []string{"CUDA_ERROR_STUB_LIBRARY"}},
		{"cuda with zero devices", zeroCUDA, flagos2, "yes", true, []string{"cuda now means flagos"}},
		{"explicit on, odd case and spaces", noCUDA, flagos2, "  TRUE ", true, nil},
		{"true cuda runtime", realCUDA, flagos2, "", false, []string{"a CUDA runtime is present (8 devices)"}},
		{"no flagos device", noCUDA, flagos0, "", false, []string{"no flagos device (no vendor backend is available)"}},
		{"turned off", noCUDA, flagos2, "0", false, []string{"FLAGOS_ALIAS_CUDA=0 turns the alias off", "cuda keeps failing"}},
		{"turned off with Off", noCUDA, flagos2, " Off", false, []string{"FLAGOS_ALIAS_CUDA=Off"}},
		{"turned off, cuda present", realCUDA, flagos2, "no", false, []string{"a CUDA runtime is present"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, p := registries(t, tt.cuda, tt.flagos)
			d, err := Decide(p, tt.env)
			require.NoError(t, err)
			assert.Equal(t, tt.active, d.Active)
			assert.Equal(t, device.CUDA, d.From)
			assert.Equal(t, device.FlagOS, d.To)
			for _, want := range tt.reason {
				assert.Contains(t, d.Reason, want)
			}
		})
	}
}

// The reported bug: a vendor-compat step redirected the live cuda probe to
// say "available" before the guard ran, and the guard read the live probe.
// Decide must give the same answer with and without such redirects.
func TestDecideIgnoresLiveRedirects(t *testing.T) {
	for _, c := range []struct {
		name         string
		cuda, flagos probe.Result
	}{{"no cuda", noCUDA, flagos2}, {"real cuda", realCUDA, flagos2}, {"no flagos", noCUDA, flagos0}} {
		t.Run(c.name, func(t *testing.T) {
			_, p := registries(t, c.cuda, c.flagos)
			before, err := Decide(p, "")
			require.NoError(t, err)
			_, err = p.Redirect("cuda", "vendor_compat", func() probe.Result { return realCUDA })
			require.NoError(t, err)
			_, err = p.Redirect("flagos", "vendor_compat", func() probe.Result { return flagos0 })
			require.NoError(t, err)
			after, err := Decide(p, "")
			require.NoError(t, err)
			assert.Equal(t, before, after)
		})
	}
}

// The answers of a machine without any accelerator, as the exact tier gives
// them (the library search of each vendor, every folder named): the alias's
// reason quotes none of it whole, so it stays one sentence of at most
// ReasonMax bytes, whatever the machine; the probes keep the details.
var (
	loaderMiss = "dl: library not found: not found in LD_LIBRARY_PATH (unset), /etc/ld.so.cache or the loader's default folders (/lib64, /usr/lib64, /lib/x86_64-linux-gnu, /usr/lib/x86_64-linux-gnu, /lib, /usr/lib)"
	noGPUCUDA  = probe.Result{Reason: "cuda: libcuda not found; tried libcuda.so.1, libcuda.so (" + loaderMiss +
		"). Install the driver, add its folder to LD_LIBRARY_PATH, or set FLAGOS_LIBCUDA_PATH=/abs/path/to/libcuda.so.1"}
	noGPUFlagOS = probe.Result{Reason: "flagos: no backend to route to: FLAGOS_BACKEND=auto: " + strings.Repeat(
		"musa is not available (musa: libmusa not found; tried libmusa.so.1, libmusa.so ("+loaderMiss+"). Install the driver); ", 8) +
		"set FLAGOS_BACKEND to a registered vendor backend to choose one"}
	overrideCUDA = probe.Result{Reason: `cuda: libcuda: FLAGOS_LIBCUDA_PATH="/nonexistent/` + strings.Repeat("x/", 200) +
		`libcuda.so.1": dl: cannot open library: stat: no such file or directory`}
	oneLine = probe.Result{Reason: "the fake says\nno. Twice; and more"}
)

// sentences counts the sentences of s: its ". " and its final ".".
func sentences(s string) int { return strings.Count(s, ". ") + strings.Count(s, ".\n") + 1 }

func TestDecideReasonIsOneShortSentence(t *testing.T) {
	for _, c := range []struct {
		name         string
		cuda, flagos probe.Result
		env          string
		want         string
	}{
		{"no GPU at all", noGPUCUDA, noGPUFlagOS, "",
			"no usable CUDA runtime (cuda: libcuda not found) and no flagos device (flagos: no backend to route to: FLAGOS_BACKEND=auto), so cuda is left as it is."},
		{"no CUDA, flagos present", noGPUCUDA, flagos2, "",
			"no usable CUDA runtime (cuda: libcuda not found), so cuda now means flagos (2 devices); set FLAGOS_ALIAS_CUDA=0 to keep cuda failing."},
		{"no CUDA, alias off", noGPUCUDA, flagos2, " off ",
			"no usable CUDA runtime (cuda: libcuda not found) and flagos has 2 devices, but FLAGOS_ALIAS_CUDA=off turns the alias off, so cuda keeps failing; unset it to let cuda mean flagos."},
		{"an override naming a long path", overrideCUDA, noGPUFlagOS, "",
			"no usable CUDA runtime (cuda: libcuda) and no flagos device (flagos: no backend to route to: FLAGOS_BACKEND=auto), so cuda is left as it is."},
		{"a long reason without a break", probe.Result{Reason: strings.Repeat("x", 500)}, flagos0, "",
			"no usable CUDA runtime and no flagos device (no vendor backend is available), so cuda is left as it is."},
		{"a reason of several lines", oneLine, flagos0, "",
			"no usable CUDA runtime (the fake says) and no flagos device (no vendor backend is available), so cuda is left as it is."},
		{"CUDA present", realCUDA, noGPUFlagOS, "", "a CUDA runtime is present (8 devices), so cuda keeps meaning cuda."},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, p := registries(t, c.cuda, c.flagos)
			d, err := Decide(p, c.env)
			require.NoError(t, err)
			assert.Equal(t, c.want, d.Reason)
			assert.LessOrEqual(t, len(d.Reason), ReasonMax, "at most %d bytes", ReasonMax)
			assert.Equal(t, 1, sentences(d.Reason), "one sentence: %q", d.Reason)
			assert.True(t, strings.HasSuffix(d.Reason, "."), "a sentence ends with a full stop")
			assert.NotContains(t, d.Reason, "\n")
		})
	}
}

func FuzzDecideReason(f *testing.F) {
	f.Add(noGPUCUDA.Reason, noGPUFlagOS.Reason, false, 0, "")
	f.Add("x. y", "a (b; c", true, 3, "no")
	f.Fuzz(func(t *testing.T, cudaWhy, flagosWhy string, cudaOK bool, flagosDevs int, env string) {
		cuda := probe.Result{Available: cudaOK, Devices: 2, Reason: cudaWhy}
		flagos := probe.Result{Available: flagosDevs > 0, Devices: flagosDevs, Reason: flagosWhy}
		_, p := registries(t, cuda, flagos)
		d, err := Decide(p, env)
		if err != nil {
			return // a bad FLAGOS_ALIAS_CUDA
		}
		if len(d.Reason) > ReasonMax || sentences(d.Reason) != 1 || strings.Contains(d.Reason, "\n") {
			t.Fatalf("reason of %d bytes, %d sentence(s): %q", len(d.Reason), sentences(d.Reason), d.Reason)
		}
	})
}

func TestDecideBadEnv(t *testing.T) {
	_, p := registries(t, noCUDA, flagos2)
	for _, v := range []string{"2", "maybe", "enable", "o n", "tru"} {
		_, err := Decide(p, v)
		require.ErrorIs(t, err, ErrBadEnv, v)
		assert.Contains(t, err.Error(), "FLAGOS_ALIAS_CUDA")
		assert.Contains(t, err.Error(), "0, false, off, no")
		assert.Contains(t, err.Error(), "1, true, on, yes")
	}
	_, err := Decide(nil, "")
	require.Error(t, err)
}

func FuzzParseEnv(f *testing.F) {
	for _, s := range []string{"", "1", "true", "on", "yes", "0", "false", "off", "no", " YES ", "\tOff\n", "2", "nope", "y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		allow, err := ParseEnv(s)
		norm := strings.ToLower(strings.TrimSpace(s))
		switch norm {
		case "", "1", "true", "on", "yes":
			if err != nil || !allow {
				t.Fatalf("ParseEnv(%q) = %v, %v; want allow", s, allow, err)
			}
		case "0", "false", "off", "no":
			if err != nil || allow {
				t.Fatalf("ParseEnv(%q) = %v, %v; want forbid", s, allow, err)
			}
		default:
			if !errors.Is(err, ErrBadEnv) || allow {
				t.Fatalf("ParseEnv(%q) = %v, %v; want ErrBadEnv", s, allow, err)
			}
		}
	})
}

func TestInstallActive(t *testing.T) {
	devs, p := registries(t, noCUDA, flagos2)
	d, undo, err := Install(devs, p, "")
	require.NoError(t, err)
	require.True(t, d.Active)
	assert.False(t, d.Blocked)
	t.Cleanup(undo)

	dev, err := devs.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, device.Device{Type: device.FlagOS, Index: 1}, dev)
	b, err := devs.Lookup(device.CUDA)
	require.NoError(t, err)
	assert.Equal(t, device.FlagOS, b.Type())

	live := p.Live("cuda")
	assert.True(t, live.Available)
	assert.Equal(t, 2, live.Devices)
	assert.Contains(t, live.Reason, "cuda is an alias of flagos")
	assert.Contains(t, live.Reason, "routes to musa")
	assert.Equal(t, noCUDA, p.Original("cuda"))
	assert.Equal(t, []string{Writer}, p.RedirectedBy("cuda"))

	again, undoAgain, err := Install(devs, p, "1")
	require.NoError(t, err)
	assert.Equal(t, d.Active, again.Active)
	assert.Equal(t, []string{Writer}, p.RedirectedBy("cuda"), "a second Install adds no redirect")
	assert.Equal(t, map[device.Type]device.Type{device.CUDA: device.FlagOS}, devs.Aliases())
	undoAgain()
	assert.Equal(t, []string{Writer}, p.RedirectedBy("cuda"), "the second Install applied nothing, so its undo removes nothing")

	undo()
	undo()
	assert.Nil(t, p.RedirectedBy("cuda"))
	assert.Empty(t, devs.Aliases())
	dev, err = devs.Parse("cuda:1")
	require.NoError(t, err)
	assert.Equal(t, device.Device{Type: device.CUDA, Index: 1}, dev)
}

func TestInstallInactiveAppliesNothing(t *testing.T) {
	for _, c := range []struct {
		name         string
		env          string
		cuda, flagos probe.Result
	}{{"off", "0", noCUDA, flagos2}, {"real cuda", "", realCUDA, flagos2}, {"no flagos", "", noCUDA, flagos0}} {
		t.Run(c.name, func(t *testing.T) {
			devs, p := registries(t, c.cuda, c.flagos)
			d, undo, err := Install(devs, p, c.env)
			require.NoError(t, err)
			t.Cleanup(undo)
			assert.False(t, d.Active)
			assert.Equal(t, c.name == "off", d.Blocked, "only the variable blocks an alias that would be active")
			assert.Empty(t, devs.Aliases())
			assert.Nil(t, p.RedirectedBy("cuda"))
			dev, err := devs.Parse("cuda:1")
			require.NoError(t, err)
			assert.Equal(t, device.CUDA, dev.Type)
		})
	}
}

func TestInstallBadEnv(t *testing.T) {
	devs, p := registries(t, noCUDA, flagos2)
	_, undo, err := Install(devs, p, "sometimes")
	require.ErrorIs(t, err, ErrBadEnv)
	require.NotNil(t, undo)
	undo()
	assert.Empty(t, devs.Aliases())
	assert.Nil(t, p.RedirectedBy("cuda"), "a failed Install applies nothing")
	_, _, err = Install(nil, p, "")
	assert.Error(t, err)
}

func TestInstallConflictingAlias(t *testing.T) {
	devs, p := registries(t, noCUDA, flagos2)
	require.NoError(t, devs.Register(stubBackend{device.MUSA, 1}))
	_, err := devs.Alias(device.CUDA, device.MUSA)
	require.NoError(t, err)
	_, _, err = Install(devs, p, "")
	require.ErrorIs(t, err, device.ErrAliased)
	assert.Nil(t, p.RedirectedBy("cuda"), "nothing half-applied")
}

func TestRedirectedLiveProbeDoesNotAllocate(t *testing.T) {
	devs, p := registries(t, noCUDA, flagos2)
	_, undo, err := Install(devs, p, "")
	require.NoError(t, err)
	t.Cleanup(undo)
	_ = p.Live("cuda")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = p.Live("cuda") }))
}

func TestConcurrentInstall(t *testing.T) {
	devs, p := registries(t, noCUDA, flagos2)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			d, _, err := Install(devs, p, "")
			assert.NoError(t, err)
			assert.True(t, d.Active)
		}()
		go func() {
			defer wg.Done()
			d, err := devs.Parse("cuda:1")
			assert.NoError(t, err)
			assert.Contains(t, []device.Type{device.CUDA, device.FlagOS}, d.Type)
			assert.False(t, p.Original("cuda").Available)
			_ = p.Live("cuda")
		}()
	}
	wg.Wait()
	assert.Equal(t, []string{Writer}, p.RedirectedBy("cuda"))
}

func BenchmarkLiveRedirectedByAlias(b *testing.B) {
	devs, p := registries(b, noCUDA, flagos2)
	_, undo, err := Install(devs, p, "")
	require.NoError(b, err)
	b.Cleanup(undo)
	b.ReportAllocs()
	for b.Loop() {
		_ = p.Live("cuda")
	}
}
