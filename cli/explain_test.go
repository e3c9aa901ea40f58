package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// explainOf is writeExplain's output for s, with each reason given once as
// Collect gives them to explain.
func explainOf(t *testing.T, s report.Info) string {
	t.Helper()
	s.ReferOnce(pointer)
	var b strings.Builder
	require.NoError(t, writeExplain(&b, s))
	return b.String()
}

// notFound is a vendor's reason on a machine without its library: the
// loader's whole search, long enough that explain gives it once.
func notFound(vendor, lib string) string {
	return vendor + ": libsomething not found; tried " + lib + ".so.1, " + lib +
		".so (dl: library not found: not found in LD_LIBRARY_PATH (unset), /etc/ld.so.cache or the loader's default folders)"
}

// TestExplainGivesEachReasonOnce: on a machine with no accelerator, flagos's
// reason carries every vendor's and the alias's carries cuda's and flagos's;
// explain gives each whole once, under Backends, and points there elsewhere.
func TestExplainGivesEachReasonOnce(t *testing.T) {
	cuda, musa, hip := notFound("cuda", "libcuda"), notFound("musa", "libmusa"), notFound("hip", "libamdhip64")
	flagos := "flagos: no backend to route to: FLAGOS_BACKEND=auto: musa is not available (" + musa +
		"); hip is not available (" + hip + "); cuda is not available (" + cuda + "); set FLAGOS_BACKEND to choose one"
	short := "acme: no device" // at most detailLen runes: stays where it is
	require.LessOrEqual(t, len(short), detailLen)
	s := report.Info{
		Backends: []report.Backend{
			{Type: device.CPU, Available: true, Devices: 1, Reason: "the host CPU is always available"},
			{Type: "acme", Reason: short},
			{Type: device.CUDA, Reason: cuda},
			{Type: device.FlagOS, Reason: flagos},
			{Type: device.HIP, Reason: hip},
			{Type: device.MUSA, Reason: musa},
		},
		Probes: []report.Probe{
			{Name: "acme", Original: report.Result{Reason: short}, Live: report.Result{Reason: short}},
			{Name: "cuda", Original: report.Result{Reason: cuda}, Live: report.Result{Reason: cuda}},
			{Name: "flagos", Original: report.Result{Reason: flagos}, Live: report.Result{Reason: flagos}},
		},
		Alias: report.Alias{From: device.CUDA, To: device.FlagOS,
			Reason: "no usable CUDA runtime (" + cuda + ") and no flagos device (" + flagos + "); cuda is left as it is."},
	}
	out := explainOf(t, s)
	for _, reason := range []string{cuda, musa, hip} {
		assert.Equal(t, 1, strings.Count(out, reason), "not given exactly once: %q\n%s", reason, out)
	}
	// flagos's own line keeps its words and points at the vendors' reasons.
	for _, line := range []string{
		"  cuda is not available: " + cuda + ".\n",
		"  flagos is not available: flagos: no backend to route to: FLAGOS_BACKEND=auto: musa is not available (see musa under Backends); " +
			"hip is not available (see hip under Backends); cuda is not available (see cuda under Backends); set FLAGOS_BACKEND to choose one.\n",
		"  acme is not available: " + short + ".\n",
		"  Asked \"is acme available?\", the true runtime answers not available: " + short + ".\n",
		"  Asked \"is cuda available?\", the true runtime answers not available: see cuda under Backends.\n",
		"  Asked \"is flagos available?\", the true runtime answers not available: see flagos under Backends.\n",
		"  cuda keeps its own meaning: no usable CUDA runtime (see cuda under Backends) and no flagos device (see flagos under Backends); cuda is left as it is.\n",
	} {
		assert.Contains(t, out, line)
	}
}

// TestExplainRoute: flagos's route names its target, and keeps what it says
// beyond the target's own answer.
func TestExplainRoute(t *testing.T) {
	musa := "musa: /usr/local/musa/lib/libmusa.so.1, driver 3.1, 2 device(s), every symbol found"
	for _, tc := range []struct{ name, target, reason, want string }{
		{"only the target's answer", musa, "routes to musa: " + musa, "  flagos routes to musa (FLAGOS_BACKEND chooses).\n"},
		{"words of its own", musa, "routes to musa: chosen by FLAGOS_BACKEND=musa; " + musa,
			"  flagos routes to musa (FLAGOS_BACKEND chooses): chosen by FLAGOS_BACKEND=musa; see musa under Backends.\n"},
		{"a short target answer stays", "musa: 2 device(s)", "routes to musa: musa: 2 device(s)",
			"  flagos routes to musa (FLAGOS_BACKEND chooses): musa: 2 device(s).\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := explainOf(t, report.Info{Backends: []report.Backend{
				{Type: device.FlagOS, Available: true, Devices: 2, RoutesTo: device.MUSA, Reason: tc.reason},
				{Type: device.MUSA, Available: true, Devices: 2, Reason: tc.target},
			}})
			assert.Contains(t, out, tc.want)
			if len(tc.target) > detailLen {
				assert.Equal(t, 1, strings.Count(out, tc.target), "the target's answer is given once, under its own name")
			}
		})
	}
}
