package cuda

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// recordReservedMB is the reserve the fakes describe, as an H100 80GB HBM3
// with driver 580 has it (480 MiB): NVML's total is the driver's and that.
const recordReservedMB = 480

// nvmlPresence is the suite's Presence: the fake NVML told the devices the
// fake libcuda describes (record_tiers compares both tiers' records), the
// CUDA version the driver's fake answers, and a reserve: NVML's total is
// the driver's total and the reserve, which nvmlDeviceGetMemoryInfo_v2
// tells apart, so that the presence tier's total is the driver's only
// where the reserve is taken out.
var nvmlPresence = fakeNVML.Told("FAKE_NVML_", func(devs []device.Record) []string {
	var major, minor int
	fmt.Sscanf(devs[0].DriverAPIVersion, "%d.%d", &major, &minor)
	return []string{fmt.Sprintf("FAKE_NVML_CUDA=%d", major*1000+minor*10),
		fmt.Sprintf("FAKE_NVML_MEM_TOTAL=%d", devs[0].TotalMemory+recordReservedMB<<20),
		fmt.Sprintf("FAKE_NVML_RESERVED_MB=%d", recordReservedMB)}
})

const mgmtCaseEnv = "MGMT_CASE"

// The exact tier's records with driver.WithManagementMemory: the reserve
// and free memory from the management library (the fake NVML), matched to
// the driver's devices; a management library whose total less its reserve
// is not the driver's total is a conflict; none there is a reason.
func TestRecordManagementMemory(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fakes")
	}
	dir := dltest.PrivateDir(t)
	lib := suite.BuildIn(t, dir)
	nvml := fakeNVML.Build(t, dir, "")
	driverTotal := uint64(80<<30 - recordReservedMB<<20)
	base := []string{EnvVar + "=" + lib, fmt.Sprintf("FAKE_CUDA_TOTAL_MEM=%d", driverTotal), "FAKE_NVML_MEM_TOTAL=" + fmt.Sprint(80<<30)}
	for _, c := range []struct{ name, nvml, reserved string }{
		{"agree", nvml, fmt.Sprint(recordReservedMB)},
		{"conflict", nvml, "0"},
		{"none", "/nonexistent/libnvidia-ml.so.1", "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dltest.MustChild(t, "TestRecordManagementMemoryChild", append(base, mgmtCaseEnv+"="+c.name, NVMLEnvVar+"="+c.nvml, "FAKE_NVML_RESERVED_MB="+c.reserved)...)
		})
	}
}

func TestRecordManagementMemoryChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of TestRecordManagementMemory")
	}
	root := "/nonexistent/machine"
	plain := New(driver.WithSysRoot(root))
	mgmt := New(driver.WithSysRoot(root), driver.WithManagementMemory(presence.NewEnv(presence.WithRoot(root))))
	total := uint64(80<<30 - recordReservedMB<<20)
	for i := range 2 {
		p, err := plain.Record(i)
		require.NoError(t, err)
		assert.Equal(t, total, p.TotalMemory, "the driver's total")
		assert.Contains(t, p.Unknown["reserved_memory"], "the driver does not tell the memory its driver and firmware reserve")
		assert.NotEmpty(t, p.Unknown["free_memory"])

		r, err := mgmt.Record(i)
		require.NoError(t, err)
		assert.Equal(t, total, r.TotalMemory, "the driver's total, whatever NVML says")
		switch os.Getenv(mgmtCaseEnv) {
		case "agree":
			assert.Equal(t, uint64(recordReservedMB<<20), r.ReservedMemory)
			assert.Empty(t, r.Unknown["reserved_memory"])
			assert.Equal(t, total-1<<30, r.FreeMemory, "NVML's free memory: no context created")
			assert.Empty(t, r.Unknown["free_memory"])
			assert.Empty(t, r.Conflicts)
		case "conflict":
			assert.Zero(t, r.ReservedMemory)
			assert.Empty(t, r.Unknown["reserved_memory"], "NVML told it: none")
			require.Len(t, r.Conflicts, 1)
			assert.Equal(t, fmt.Sprintf("total_memory: the driver says %d bytes, nvml's total less its reserve %d", total, uint64(80<<30)), r.Conflicts[0])
		case "none":
			assert.Zero(t, r.ReservedMemory)
			assert.True(t, strings.HasPrefix(r.Unknown["reserved_memory"], "no management library answered: nvml: "), r.Unknown["reserved_memory"])
			assert.NotEmpty(t, r.Unknown["free_memory"])
			assert.Empty(t, r.Conflicts)
		default:
			t.Fatalf("no case %q", os.Getenv(mgmtCaseEnv))
		}
	}
}
