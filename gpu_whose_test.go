//go:build gpu

package flagshim_test

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/cli"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
)

// On the reference H200, whose runtime answers cuda is NVIDIA's in every
// tier, from the same rules the fakes prove (sysfs's PCI vendor 0x10de
// first): info --json in a process of its own per tier, as a user runs it.
func TestGPUVendorInEveryTier(t *testing.T) {
	for _, tr := range []string{"exact", "presence", "isolated"} {
		t.Run(tr, func(t *testing.T) {
			out := dltest.MustChild(t, "TestGPUVendorChild", "FLAGOS_PROBE="+tr)
			t.Log(out)
		})
	}
}

// TestGPUVendorChild is the child's side of TestGPUVendorInEveryTier.
func TestGPUVendorChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as the child process of TestGPUVendorInEveryTier")
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli.Run([]string{"info", "--json"}, &stdout, &stderr), stderr.String())
	var info report.Info
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &info))
	assert.Equal(t, os.Getenv("FLAGOS_PROBE"), string(info.Probe))
	var cuda *report.Backend
	for i := range info.Backends {
		if info.Backends[i].Type == device.CUDA {
			cuda = &info.Backends[i]
		}
	}
	require.NotNil(t, cuda)
	require.True(t, cuda.Available, cuda.Reason)
	assert.Equal(t, info.Probe, cuda.Tier)
	assert.Equal(t, "NVIDIA", cuda.Vendor, "facts: %v", cuda.VendorFacts)
	assert.Contains(t, strings.Join(cuda.VendorFacts, "\n"), "PCI vendor 0x10de (NVIDIA)", "the strongest fact: sysfs")
	require.NotEmpty(t, cuda.Properties)
	for _, p := range cuda.Properties {
		assert.Equal(t, "NVIDIA", p.Vendor, "device %d", p.Index)
	}
	assert.False(t, info.Alias.Active, "CUDA is here: no alias")
	t.Logf("tier %s: cuda vendor %q, %d device(s); facts: %s", info.Probe, cuda.Vendor, cuda.Devices, strings.Join(cuda.VendorFacts, "; "))
}
