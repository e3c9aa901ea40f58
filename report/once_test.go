package report

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
)

const miss = "dl: library not found: not found in LD_LIBRARY_PATH (unset), /etc/ld.so.cache or the loader's default folders (/lib64, /usr/lib64)"

func TestGroupAttempts(t *testing.T) {
	in := []device.Attempt{
		{Path: "libcuda.so.1", Error: miss}, {Path: "libcuda.so", Error: miss},
		{Path: "/usr/local/cuda/lib64/libcuda.so.1", Error: "unsafe"}, {Path: "/opt/libcuda.so.1"},
	}
	assert.Equal(t, []Attempt{
		{Paths: []string{"libcuda.so.1", "libcuda.so"}, Error: miss},
		{Paths: []string{"/usr/local/cuda/lib64/libcuda.so.1"}, Error: "unsafe"},
		{Paths: []string{"/opt/libcuda.so.1"}},
	}, groupAttempts(in))
	assert.Equal(t, 4, Tried(groupAttempts(in)))
	assert.Nil(t, groupAttempts(nil))
	// Only runs are grouped: the order of the search stays.
	assert.Len(t, groupAttempts([]device.Attempt{{Path: "a", Error: "x"}, {Path: "b", Error: "y"}, {Path: "c", Error: "x"}}), 3)
}

// Each attempt's error is given whole once: the backend's own reason points
// to its attempts, a later backend's identical error to the first's.
func TestReferAttemptsOnce(t *testing.T) {
	cuda := "cuda: libcuda not found; tried libcuda.so.1, libcuda.so (" + miss + "). Install the driver"
	attempts := []Attempt{{Paths: []string{"libcuda.so.1", "libcuda.so"}, Error: miss}}
	s := Info{Backends: []Backend{
		{Type: device.CUDA, Reason: cuda, Attempts: attempts},
		{Type: device.MUSA, Reason: "musa: libmusa not found; tried libmusa.so.1 (" + miss + ")",
			Attempts: []Attempt{{Paths: []string{"libmusa.so.1"}, Error: miss}, {Paths: []string{"x"}, Error: "short"}}},
		{Type: "acme", Reason: "acme: short", Attempts: []Attempt{{Paths: []string{"/opt/acme.so"}}}},
	}}
	s.ReferAttemptsOnce(nil)
	assert.Equal(t, "cuda: libcuda not found; tried libcuda.so.1, libcuda.so (see attempts). Install the driver", s.Backends[0].Reason)
	assert.Equal(t, miss, s.Backends[0].Attempts[0].Error, "the first backend gives it whole")
	assert.Equal(t, "musa: libmusa not found; tried libmusa.so.1 (see attempts)", s.Backends[1].Reason)
	assert.Equal(t, "see the attempts of backend cuda", s.Backends[1].Attempts[0].Error)
	assert.Equal(t, "short", s.Backends[1].Attempts[1].Error, "a short error stays")
	assert.Empty(t, s.Backends[2].Attempts[0].Error)
	assert.Equal(t, miss, attempts[0].Error, "the caller's slice is not written to")

	s = Info{Backends: []Backend{{Type: device.CUDA, Reason: cuda, Attempts: attempts}}}
	s.ReferAttemptsOnce(func(of, from device.Type) string { return "" })
	assert.Equal(t, cuda, s.Backends[0].Reason, `"": the reason keeps the error`)
	s = Info{Backends: []Backend{{Type: device.CUDA, Reason: cuda, Attempts: attempts}}}
	s.ReferAttemptsOnce(func(of, from device.Type) string { return "see " + string(of) + "/" + string(from) })
	assert.Equal(t, "cuda: libcuda not found; tried libcuda.so.1, libcuda.so (see cuda/cuda). Install the driver", s.Backends[0].Reason)
}

func TestOwnExtra(t *testing.T) {
	nvml := "libnvidia-ml.so.1 not found (tried libnvidia-ml.so.1); install the driver's management library"
	be := Backend{Type: device.CUDA, Available: false, Devices: 0, Tier: tier.Presence,
		Reason: "cuda: presence: libcuda not found; nvml: " + nvml + "; device nodes: none",
		Extra: map[string]string{
			"available": "false", "devices": "0", "tier": "presence", "reason": "cuda: presence: libcuda not found; nvml: " + nvml + "; device nodes: none",
			"presence.nvml": nvml, "presence.device nodes": "none", "CUDA_VISIBLE_DEVICES": "0",
		}}
	assert.Equal(t, map[string]string{"presence.device nodes": "none", "CUDA_VISIBLE_DEVICES": "0"}, ownExtra(be),
		"what the backend says already is left out; a short fact stays")
	assert.Len(t, be.Extra, 7, "the driver's map is not written to")
	be.Extra = map[string]string{"available": "true", "devices": "3", "tier": "exact"}
	assert.Equal(t, be.Extra, ownExtra(be), "a different value is another fact")
	be.Extra = map[string]string{"available": "false"}
	assert.Nil(t, ownExtra(be))
}

func TestRepeatsBackend(t *testing.T) {
	s := Info{Backends: []Backend{{Type: device.CUDA, Reason: "no cuda"}, {Type: device.FlagOS, Available: true, Devices: 2, Reason: "routes to musa"}}}
	no := Result{Reason: "no cuda"}
	assert.True(t, s.repeatsBackend(Probe{Name: "cuda", Live: no, Original: no}))
	assert.False(t, s.repeatsBackend(Probe{Name: "cuda", Live: Result{Available: true, Devices: 2}, Original: no, RedirectedBy: []string{"alias"}}))
	assert.False(t, s.repeatsBackend(Probe{Name: "cuda", Live: Result{Reason: "other"}, Original: Result{Reason: "other"}}), "another answer")
	assert.False(t, s.repeatsBackend(Probe{Name: "nvshmem", Live: no, Original: no}), "no backend of its name")
}

func TestVerdict(t *testing.T) {
	cpu := Backend{Type: device.CPU, Available: true, Devices: 1, Properties: []Device{{Name: "host cpu (amd64)"}}}
	h100 := Backend{Type: device.CUDA, Available: true, Devices: 1, Properties: []Device{{Name: "NVIDIA H100 80GB HBM3"}}}
	musa := Backend{Type: device.MUSA, Available: true, Devices: 3, Properties: []Device{{Name: "MTT S4000"}, {Name: "MTT S4000"}, {Name: "MTT S80"}}}
	mixed := Backend{Type: "acme", Available: true, Devices: 3, Properties: []Device{{Name: "A"}, {Name: "B"}, {Name: "C"}}}
	flagos := Backend{Type: device.FlagOS, Available: true, Devices: 3, RoutesTo: device.MUSA}
	off := Alias{From: device.CUDA, To: device.FlagOS}
	on := Alias{Active: true, From: device.CUDA, To: device.FlagOS}
	for _, c := range []struct {
		name string
		s    Info
		host string
		want string
	}{
		{"a CUDA machine", Info{Probe: tier.Isolated, ProbeSource: SourceDefault, Alias: off, Backends: []Backend{cpu, h100, {Type: device.FlagOS}}},
			"the flagshim command", "cuda: 1 device (NVIDIA H100 80GB HBM3); cuda means cuda; isolated tier, the default of the flagshim command"},
		{"a MUSA machine, aliased", Info{Probe: tier.Presence, ProbeSource: SourceEnv, Alias: on, Backends: []Backend{cpu, flagos, musa}},
			"", "musa: 3 devices (MTT S4000, MTT S80); cuda means flagos (routes to musa); presence tier, chosen by FLAGOS_PROBE"},
		{"nothing", Info{Probe: tier.Exact, ProbeSource: SourceFlag, Alias: off, Backends: []Backend{cpu, {Type: device.CUDA}}},
			"", "no accelerator found; cuda means cuda; exact tier, chosen by --probe"},
		{"many names, two vendors, source unknown", Info{Probe: tier.Exact, Alias: off, Backends: []Backend{mixed, h100}},
			"", "acme: 3 devices (A, B, …), cuda: 1 device (NVIDIA H100 80GB HBM3); cuda means cuda; exact tier"},
		{"the default, no host named", Info{Probe: tier.Exact, ProbeSource: SourceDefault, Alias: off}, "", "no accelerator found; cuda means cuda; exact tier, the default"},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, Verdict(c.s, c.host)) })
	}
}

func TestProbeSource(t *testing.T) {
	env := func(v string) func(string) (string, bool) {
		return func(string) (string, bool) { return v, v != "" }
	}
	for _, c := range []struct {
		name string
		got  tier.Tier
		o    Options
		env  string
		want string
	}{
		{"Go's default", tier.Exact, Options{}, "", SourceDefault},
		{"the CLI's default", tier.Isolated, Options{DefaultTier: tier.Isolated}, "", SourceDefault},
		{"FLAGOS_PROBE", tier.Presence, Options{DefaultTier: tier.Isolated}, " presence ", SourceEnv},
		{"--probe beats FLAGOS_PROBE", tier.Exact, Options{ChosenTier: tier.Exact, DefaultTier: tier.Isolated}, "presence", SourceFlag},
		{"Init ran earlier with another tier", tier.Exact, Options{DefaultTier: tier.Isolated}, "", ""},
		{"a bad FLAGOS_PROBE", tier.Isolated, Options{DefaultTier: tier.Isolated}, "fast", ""},
	} {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, probeSource(c.got, c.o, env(c.env))) })
	}
}
