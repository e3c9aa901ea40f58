package cncftest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/fleet/fleettest"
	"github.com/flagos-ai/flagshim/fleet/labels"
	"github.com/flagos-ai/flagshim/report"
)

// nfdAccepts is what nfd-master accepts of a feature-file line
// (node-feature-discovery pkg/apis/nfd/validate/validate.go, Label): a
// qualified name with a namespace other than kubernetes.io, and a label
// value, by Kubernetes' own validation.
func nfdAccepts(t *testing.T, line string) {
	t.Helper()
	key, value, _ := strings.Cut(line, "=")
	assert.Empty(t, validation.IsQualifiedName(key), "%q", line)
	assert.Empty(t, validation.IsValidLabelValue(value), "%q", line)
	ns, _, ok := strings.Cut(key, "/")
	assert.True(t, ok, "%q has a namespace", line)
	assert.False(t, ns == "kubernetes.io" || strings.HasSuffix(ns, ".kubernetes.io"), "%q: a denied namespace", line)
}

// TestLabelsKubernetesAccepts: `flagshim labels` on a fake machine, and
// labels made of hostile driver facts (spaces, 200 characters, non-ASCII,
// control characters), are all accepted by Kubernetes' validation.
func TestLabelsKubernetesAccepts(t *testing.T) {
	m := fleettest.NVIDIA(t, 2, fleettest.Options{})
	code, out, errOut := m.Run(t, []string{"FAKE_NVML_NAMES=NVIDIA H100 80GB HBM3,NVIDIA H100 80GB HBM3"}, "labels")
	require.Equal(t, 0, code, errOut)
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
			nfdAccepts(t, l)
		}
	}
	assert.Contains(t, lines, "flagos.ai/cuda.count=2")
	assert.Contains(t, lines, "flagos.ai/cuda.model=NVIDIA-H100-80GB-HBM3")
	assert.Contains(t, lines, "flagos.ai/cuda.driver-version="+fleettest.DriverVersion)
	assert.Contains(t, lines, "flagos.ai/tier=presence")

	long := strings.Repeat("Ä GPU ", 40)
	info := report.Info{Probe: "isolated", Backends: []report.Backend{
		{Type: device.MUSA, Available: true, Devices: 1, DriverVersion: "3.1 build\t7", Vendor: long, Tier: "presence",
			Properties: []report.Device{{Name: "  " + long + " \x00\n"}}},
		{Type: device.CUDA, Available: true, Devices: 1, Vendor: "日本語", Properties: []report.Device{{Name: "-._-"}}},
	}}
	for _, l := range labels.FromReport(info) {
		nfdAccepts(t, l.String())
	}
	for _, s := range []string{"a b", strings.Repeat("x", 200), "日本語", "-a-", ".", "a..b", "\xff\xfe"} {
		nfdAccepts(t, labels.Name(s)+"="+labels.Value(s))
	}
}
