package labels

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100 80GB HBM3":        "NVIDIA-H100-80GB-HBM3",
		"  spaced  out  ":              "spaced-out",
		"580.95.05":                    "580.95.05",
		"Iluvatar CoreX (BI-V150)":     "Iluvatar-CoreX-BI-V150",
		"摩尔线程 MTT S4000":               "MTT-S4000",
		"---":                          "",
		"":                             "",
		strings.Repeat("a", 200):       strings.Repeat("a", 63),
		strings.Repeat("a", 62) + " b": strings.Repeat("a", 62),
	} {
		assert.Equal(t, want, Sanitize(in), "%q", in)
	}
}

// hostile is a report whose driver facts are hostile to label rules.
func hostile() report.Info {
	long := strings.Repeat("GPU name ", 25) // 225 characters
	return report.Info{Probe: "presence", Alias: report.Alias{Active: true},
		Backends: []report.Backend{
			{Type: device.CPU, Available: true, Devices: 1},
			{Type: device.MUSA, Available: true, Devices: 2, DriverVersion: "3.1 (build 7) ", Vendor: "Moore Threads 摩尔线程", Tier: "presence",
				Properties: []report.Device{{Name: long}, {Name: long}}},
			{Type: device.CUDA, Available: true, Devices: 1, DriverVersion: "", Vendor: "Iluvatar CoreX", Tier: "isolated",
				Properties: []report.Device{{Name: "-\x00-\n-"}}},
			{Type: device.FlagOS, Available: true, Devices: 2, RoutesTo: device.MUSA},
			{Type: device.HIP, Available: false},
		}}
}

func TestFromReport(t *testing.T) {
	ls := FromReport(hostile())
	got := map[string]string{}
	for _, l := range ls {
		require.NoError(t, Check(l))
		got[l.Name] = l.Value
	}
	assert.Equal(t, map[string]string{
		"flagos.ai/cuda-aliased":        "true",
		"flagos.ai/tier":                "presence",
		"flagos.ai/vendor":              "mixed",
		"flagos.ai/musa.count":          "2",
		"flagos.ai/musa.model":          Sanitize(strings.Repeat("GPU name ", 25)),
		"flagos.ai/musa.driver-version": "3.1-build-7",
		"flagos.ai/musa.vendor":         "Moore-Threads",
		"flagos.ai/musa.tier":           "presence",
		"flagos.ai/cuda.count":          "1",
		"flagos.ai/cuda.model":          "",
		"flagos.ai/cuda.driver-version": "",
		"flagos.ai/cuda.vendor":         "Iluvatar-CoreX",
		"flagos.ai/cuda.tier":           "isolated",
		"flagos.ai/flagos.routes-to":    "musa",
	}, got)
	assert.Equal(t, "GPU-name-GPU-name-GPU-name-GPU-name-GPU-name-GPU-name-GPU-name", got["flagos.ai/musa.model"], "cut to 63, then trimmed of its dash")

	var b bytes.Buffer
	require.NoError(t, Write(&b, ls))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	assert.True(t, strings.HasPrefix(lines[0], "# "), "a comment first")
	assert.Len(t, lines, len(ls)+1)
	for i, l := range lines[1:] {
		assert.Equal(t, ls[i].String(), l)
	}

	none := FromReport(report.Info{Probe: "exact"})
	assert.Contains(t, none, Label{"flagos.ai/vendor", "none"})
	assert.Contains(t, none, Label{"flagos.ai/cuda-aliased", "false"})
}

func TestCheck(t *testing.T) {
	assert.NoError(t, Check(Label{"flagos.ai/a", ""}))
	for _, bad := range []Label{{"a", "b"}, {"flagos.ai/", "b"}, {"flagos.ai/a b", "c"}, {"flagos.ai/a", "-b"},
		{"flagos.ai/" + strings.Repeat("a", 64), ""}, {"flagos.ai/a", strings.Repeat("b", 64)}, {"flagos.ai/ä", ""}} {
		assert.Error(t, Check(bad), "%v", bad)
	}
}

// FuzzSanitize: whatever a driver says, the label made of it is one
// Kubernetes accepts, and sanitizing it again changes nothing.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"NVIDIA H100 80GB HBM3", strings.Repeat("x", 200), "摩尔线程", "a..b--c__", "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Sanitize(s)
		require.NoError(t, Check(Label{Name(s), v}))
		assert.Equal(t, v, Sanitize(v))
		assert.LessOrEqual(t, len(v), MaxLen)
	})
}
