package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// A broken driver is not "no GPU": with NVIDIA's PCI devices in sysfs and
// a driver (and management library) that fails, list and query show the
// devices present and unusable with the reason, and list
// --accelerators-only exits 7, not 6. Each way of failing is a child
// process on the fake machine.
func TestBrokenDriverIsNotNoGPU(t *testing.T) {
	cases := []struct {
		name   string
		env    []string
		reason string // a part of the reason on stderr
	}{
		{"init fails", []string{"FAKE_NVML_INIT_RESULT=9", "FAKE_CUDA_INIT_RESULT=999"}, "CUDA_ERROR_UNKNOWN"},
		{"init crashes", []string{"FAKE_NVML_INIT_RESULT=9", "FAKE_CUDA_INIT_CRASH=segv"}, "the driver crashed in cuInit (signal 11"},
		{"init hangs", []string{"FAKE_NVML_INIT_RESULT=9", "FAKE_CUDA_INIT_SLEEP_MS=20000", "FLAGOS_PROBE_TIMEOUT=300ms"}, "the driver did not return within 300ms"},
		{"management library fails, presence tier", []string{"FAKE_NVML_INIT_RESULT=9", "FLAGOS_PROBE=presence"}, "NVIDIA kernel driver is not loaded"},
		{"hidden by the visible-devices variable", []string{"CUDA_VISIBLE_DEVICES=-1", "FLAGOS_PROBE=presence"}, "CUDA_VISIBLE_DEVICES=-1 is set"},
	}
	if dltest.IsChild(t) {
		checkBroken(t, os.Getenv("UNUSABLE_REASON"))
		return
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dltest.MustChild(t, "TestBrokenDriverIsNotNoGPU", fakeGPUMachine(t, append(c.env, "UNUSABLE_REASON="+c.reason)...)...)
		})
	}
}

func checkBroken(t *testing.T, reason string) {
	code, out, errOut := runCLI("list", "--accelerators-only")
	assert.Equal(t, exitUnusable, code, "stdout: %s\nstderr: %s", out, errOut)
	assert.Empty(t, out, "no usable accelerator: no line")
	assert.Contains(t, errOut, "cuda: 2 devices present but unusable: ")
	assert.Contains(t, errOut, reason)
	assert.NotContains(t, errOut, "no accelerator found")
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line of reason: %s", errOut)

	code, out, _ = runCLI("list")
	assert.Equal(t, exitOK, code, "list itself succeeds: the devices are listed")
	assert.Contains(t, out, "cpu:0: ")
	assert.Contains(t, out, "\ncuda: unusable: 0000:18:00.0 (nvidia, PCI 0x233010DE)\ncuda: unusable: 0000:19:00.0 (nvidia, PCI 0x233010DE)\n")

	code, out, _ = runCLI("list", "--json", "--accelerators-only")
	assert.Equal(t, exitUnusable, code)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	assert.Empty(t, l.Devices)
	require.Len(t, l.Unusable, 2)
	r := l.Unusable[1]
	assert.False(t, r.Usable)
	assert.Equal(t, -1, r.VisibleIndex)
	assert.Equal(t, 1, r.Index, "its place in PCI order among the devices of its driver")
	assert.Equal(t, "0000:19:00.0", r.PCIBusID)
	assert.Equal(t, "nvidia", r.Vendor)
	assert.Equal(t, 1, r.NUMANode)
	assert.Contains(t, r.Reason, reason)
	assert.NotEmpty(t, r.Unknown["uuid"])

	code, out, _ = runCLI("query", "--query-gpu=index,pci.bus_id,vendor,usable,visible_index,name", "--format=csv,noheader")
	assert.Equal(t, exitUnusable, code)
	assert.Equal(t, "0, 00000000:18:00.0, nvidia, No, [N/A], [N/A]\n1, 00000000:19:00.0, nvidia, No, [N/A], [N/A]\n", out)
}

// Without NVIDIA devices in sysfs, the same broken driver is "nothing
// there": 6.
func TestBrokenDriverWithoutDevices(t *testing.T) {
	if !dltest.IsChild(t) {
		env := fakeGPUMachine(t, "FAKE_NVML_INIT_RESULT=9", "FAKE_CUDA_INIT_RESULT=999")
		for i, kv := range env {
			if strings.HasPrefix(kv, "FLAGOS_TEST_ROOT=") {
				env[i] = "FLAGOS_TEST_ROOT=" + t.TempDir()
			}
		}
		dltest.MustChild(t, t.Name(), env...)
		return
	}
	code, out, errOut := runCLI("list", "--accelerators-only")
	assert.Equal(t, exitNoDevice, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "no accelerator found")
	code, _, _ = runCLI("query", "--query-gpu=index")
	assert.Equal(t, exitNoDevice, code)
}
