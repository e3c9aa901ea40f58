package cuda

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeNVML is testdata/fake_nvml.c, a libnvidia-ml.so.1 driven by FAKE_NVML_* (the log variable: the kit's default).
var fakeNVML = presencetest.Lib{Src: "testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: NVMLEnvVar}

const nvmlInit, nvmlShutdown = "nvmlInit_v2", "nvmlShutdown"

// TestNVMLFakes runs each case against the fake NVML in a child process (a
// loaded soname stays loaded for the life of a process): what every
// binding is tested for, then NVML's own.
func TestNVMLFakes(t *testing.T) {
	(&presencetest.Suite{Lib: fakeNVML, Source: NVML, Common: nvmlCommon, Cases: nvmlCases}).Test(t)
}

var nvmlCommon = &presencetest.Common{
	Source: SourceNVML, Label: "NVML",
	Init: nvmlInit, Shutdown: nvmlShutdown, ErrorString: "nvmlErrorString",
	Count: "nvmlDeviceGetCount_v2", Handle: "nvmlDeviceGetHandleByIndex_v2",
	DeviceCalls: []string{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2"},
	Answer:      presencetest.Answer{DriverVersion: "550.54.15", Devices: []presence.Device{fakeGPU(0), fakeGPU(1)}},
	InitFail: presencetest.Failure{Code: 9, Name: "NVML_ERROR_DRIVER_NOT_LOADED", Message: "Driver Not Loaded",
		Reason: "NVML: the NVIDIA kernel driver is not loaded (NVML_ERROR_DRIVER_NOT_LOADED): no NVIDIA GPU is usable here"},
	CountFail:  presencetest.Failure{Code: 999, Name: "NVML_ERROR_UNKNOWN", Message: "Unknown Error"},
	HandleFail: presencetest.Failure{Code: 999, Name: "NVML_ERROR_UNKNOWN", Message: "Unknown Error"},
	Missing:    presencetest.Missing{Define: "FAKE_NO_NAME", Names: []string{"nvmlDeviceGetName"}},
	Optional: presencetest.Build{Defines: []string{"-DFAKE_NO_CC", "-DFAKE_NO_CUDA_VERSION", "-DFAKE_NO_PCI", "-DFAKE_NO_MIG", "-DFAKE_NO_MEMORY_V2"},
		Answer: presencetest.Answer{DriverVersion: "550.54.15", Devices: []presence.Device{bare(0), bare(1)}}},
	Visible: VisibleDevicesEnv, Ignored: []string{"MUSA_VISIBLE_DEVICES"},
	// CUDA's nodes, and HIP's sources (KFD, render nodes). (MTML is
	// drivers/musa's case.)
	Also: func(e *presence.Env) { presenceSources(e); hip.Vendor().Presence(e) },
}

// fakeGPU is the fake NVML's device i with its defaults.
func fakeGPU(i int) presence.Device {
	d := bare(i)
	d.PCIBusID, d.Major = fmt.Sprintf("00000000:%02X:00.0", 0x18+i), 9
	d.PartitionsListed = true // no MIG on the fake by default: none to list
	d.ReservedKnown = true    // nvmlDeviceGetMemoryInfo_v2: no reserve by default
	return d
}

// bare is the fake's device i without the optional functions: no compute
// capability, no PCI bus id, no reserve (v1's memory).
func bare(i int) presence.Device {
	return presence.Device{Index: i, SourceIndex: i, Name: "Fake NVIDIA GPU", UUID: fmt.Sprintf("GPU-%08x-1111-2222-3333-444444444444", i),
		TotalMemory: 80 << 30, FreeMemory: 79 << 30}
}

var nvmlCases = []presencetest.Case{
	{Name: "versions first", Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 12040, r.CUDAVersion)
		require.GreaterOrEqual(t, len(calls), 4)
		assert.Equal(t, []string{nvmlInit, "nvmlSystemGetDriverVersion", "nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetCount_v2"}, calls[:4])
	}},
	{Name: "no permission", Env: []string{"FAKE_NVML_INIT_RESULT=4"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "NVML_ERROR_NO_PERMISSION")
		assert.Contains(t, r.Reason, "/dev/nvidia*")
	}},
	{Name: "driver version mismatch", Env: []string{"FAKE_NVML_INIT_RESULT=18"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Contains(t, r.Reason, "NVML_ERROR_LIB_RM_VERSION_MISMATCH")
		assert.Contains(t, r.Reason, "reboot, or reload the nvidia module")
	}},
	{Name: "unknown init code", Env: []string{"FAKE_NVML_INIT_RESULT=77"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrInit)
		assert.Equal(t, "NVML: nvmlInit_v2 returned unknown code (77): Unknown Error", r.Reason)
	}},
	{Name: "name fails", Env: []string{"FAKE_NVML_NAME_RESULT=3"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, "", r.Devices[0].Name)
		assert.Equal(t, "GPU-00000000-1111-2222-3333-444444444444", r.Devices[0].UUID, "the rest is read")
		assert.Contains(t, presencetest.Notes(r), "device 1: NVML: nvmlDeviceGetName returned NVML_ERROR_NOT_SUPPORTED (3): Not Supported")
	}},
	{Name: "visible ordinals", Env: []string{"FAKE_NVML_COUNT=4", "FAKE_NVML_NAMES=H,H,H,H", "CUDA_VISIBLE_DEVICES=3,1,7,2"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 4, r.Total)
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=3,1,7,2", r.Visibility)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, [2]int{3, 1}, [2]int{r.Devices[0].SourceIndex, r.Devices[1].SourceIndex})
		assert.Equal(t, [2]int{0, 1}, [2]int{r.Devices[0].Index, r.Devices[1].Index})
		assert.Equal(t, "NVML sees 4 devices, 2 visible through CUDA_VISIBLE_DEVICES=3,1,7,2", r.Reason)
	}},
	{Name: "visible UUID prefix", Env: []string{"FAKE_NVML_UUIDS=GPU-aaaa-1,GPU-bbbb-2", "CUDA_VISIBLE_DEVICES=GPU-bb"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, "GPU-bbbb-2", r.Devices[0].UUID)
		assert.Equal(t, 0, r.Devices[0].Index)
	}},
	{Name: "visible MIG without MIG calls", Defines: []string{"-DFAKE_NO_MIG"}, Env: []string{"CUDA_VISIBLE_DEVICES=MIG-4e1c"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
		assert.Contains(t, r.Reason, "FLAGOS_PROBE=isolated")
		assert.Equal(t, 2, r.Total)
		presencetest.Paired(t, calls, nvmlInit, nvmlShutdown)
	}},
	{Name: "visible MIG naming none", Env: []string{"CUDA_VISIBLE_DEVICES=MIG-4e1c"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err, "NVML lists every GPU's MIG instances (none): the name names nothing")
		assert.Empty(t, r.Devices)
	}},
	{Name: "unlike GPUs: indexes undecidable", Env: []string{"FAKE_NVML_NAMES=H100,A100", "CUDA_VISIBLE_DEVICES=1"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "FASTEST_FIRST among two models")
		assert.Contains(t, r.Reason, "CUDA_DEVICE_ORDER=PCI_BUS_ID")
	}},
	{Name: "unlike GPUs by bus id", Env: []string{"FAKE_NVML_NAMES=H100,A100", "CUDA_VISIBLE_DEVICES=1", "CUDA_DEVICE_ORDER=PCI_BUS_ID"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, 1, r.Devices[0].SourceIndex, "bus 0x19 is second")
	}},
	{Name: "unlike GPUs unset", Env: []string{"FAKE_NVML_NAMES=H100,A100"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2, "every GPU, in NVML's order")
		assert.Contains(t, presencetest.Notes(r), "orders devices of different kinds fastest first")
	}},
	{Name: "MIG instances", Env: []string{"FAKE_NVML_COUNT=3", "FAKE_NVML_NAMES=H,H,H", "FAKE_NVML_MIG=-,3,d"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 3, r.Total, "MIG instances are not counted as GPUs")
		require.Len(t, r.All, 6)
		mig := r.All[2:5]
		for k, d := range mig {
			assert.Equal(t, fmt.Sprintf("MIG-00000001-5555-6666-7777-%012x", k), d.UUID)
			assert.Equal(t, "GPU-00000001-1111-2222-3333-444444444444", d.Parent)
			assert.Equal(t, "H MIG 1g.10gb", d.Name)
			assert.Equal(t, uint64(10<<30), d.TotalMemory)
			assert.Equal(t, "00000000:19:00.0", d.PCIBusID)
		}
		assert.True(t, r.All[1].Partitioned)
		assert.False(t, r.All[5].Partitioned, "MIG mode off")
		for _, d := range []presence.Device{r.All[0], r.All[1], r.All[5]} {
			assert.True(t, d.PartitionsListed)
		}
		require.Len(t, r.Devices, 1, "unset: CUDA shows the first MIG instance alone")
		assert.Equal(t, mig[0].UUID, r.Devices[0].UUID)
		assert.Contains(t, presencetest.Notes(r), "one MIG instance per process")
		assert.Contains(t, calls, "nvmlDeviceGetMigDeviceHandleByIndex")
		assert.NotContains(t, calls, "nvmlDeviceSetMigMode", "the mode is never changed")
	}},
	{Name: "visible MIG UUID", Env: []string{"FAKE_NVML_COUNT=2", "FAKE_NVML_MIG=2,-", "CUDA_VISIBLE_DEVICES=MIG-00000000-5555-6666-7777-000000000001"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, "MIG-00000000-5555-6666-7777-000000000001", r.Devices[0].UUID)
		assert.Equal(t, 0, r.Devices[0].Index)
		assert.Equal(t, "CUDA_VISIBLE_DEVICES=MIG-00000000-5555-6666-7777-000000000001", r.Visibility)
	}},
	{Name: "visible MIG prefix", Env: []string{"FAKE_NVML_MIG=2", "CUDA_VISIBLE_DEVICES=MIG-00000000"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable, "whether CUDA takes MIG prefixes is not documented")
	}},
	{Name: "MIG hole", Env: []string{"FAKE_NVML_MIG=3", "FAKE_NVML_MIG_HOLE=0", "CUDA_VISIBLE_DEVICES=1,0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.All, 4, "the instances at 1 and 2 only")
		assert.Equal(t, "MIG-00000000-5555-6666-7777-000000000001", r.All[1].UUID)
		require.Len(t, r.Devices, 1, "GPU 0 is in MIG mode: its first instance alone, and not GPU 1")
		assert.Equal(t, r.All[1].UUID, r.Devices[0].UUID)
	}},
	{Name: "GPU in MIG mode without instance", Env: []string{"FAKE_NVML_MIG=0"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		assert.ErrorIs(t, r.Err, presence.ErrUndecidable)
		assert.Contains(t, r.Reason, "MIG mode without a MIG instance")
	}},
	{Name: "no CUDA version", Defines: []string{"-DFAKE_NO_CUDA_VERSION"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Equal(t, 0, r.CUDAVersion)
		assert.Empty(t, r.Notes)
	}},
	// An H100 80GB HBM3 with driver 580 (NVML's total 81559 MiB, 480 of
	// them reserved): the record's total is the driver's, v2's total less
	// the reserve; v1 is not asked.
	{Name: "memory v2: the reserve apart", Env: []string{"FAKE_NVML_MEM_TOTAL=85520809984", "FAKE_NVML_RESERVED_MB=480"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		for _, d := range r.Devices {
			assert.Equal(t, uint64(85017493504), d.TotalMemory, "cuDeviceTotalMem's answer on that H100: total - reserved")
			assert.Equal(t, uint64(503316480), d.ReservedMemory)
			assert.True(t, d.ReservedKnown)
			assert.Equal(t, uint64(85017493504-1<<30), d.FreeMemory, "1 GiB allocated")
		}
		assert.Contains(t, calls, "nvmlDeviceGetMemoryInfo_v2")
		assert.NotContains(t, calls, "nvmlDeviceGetMemoryInfo", "v2 answered: v1 is not asked")
		assert.Empty(t, presencetest.Notes(r))
	}},
	{Name: "memory v2 fails: v1's total", Env: []string{"FAKE_NVML_MEM_TOTAL=85520809984", "FAKE_NVML_RESERVED_MB=480", "FAKE_NVML_MEMORY_V2_RESULT=3"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		d := r.Devices[0]
		assert.Equal(t, uint64(85520809984), d.TotalMemory, "v1's total, the reserve in it")
		assert.False(t, d.ReservedKnown)
		assert.Zero(t, d.ReservedMemory)
		assert.Equal(t, uint64(85520809984-480<<20-1<<30), d.FreeMemory)
		assert.Contains(t, presencetest.Notes(r), "device 0: NVML: nvmlDeviceGetMemoryInfo_v2 returned NVML_ERROR_NOT_SUPPORTED (3): Not Supported; its total is nvmlDeviceGetMemoryInfo's, the reserve unknown")
	}},
	{Name: "memory before R510: v1 alone", Defines: []string{"-DFAKE_NO_MEMORY_V2"}, Env: []string{"FAKE_NVML_RESERVED_MB=480"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 2)
		assert.Equal(t, uint64(80<<30), r.Devices[1].TotalMemory)
		assert.False(t, r.Devices[1].ReservedKnown)
		assert.NotContains(t, calls, "nvmlDeviceGetMemoryInfo_v2")
		assert.Empty(t, presencetest.Notes(r), "a missing optional function is no failure")
	}},
	{Name: "memory of MIG instances", Env: []string{"FAKE_NVML_MIG=2", "FAKE_NVML_RESERVED_MB=480", "CUDA_VISIBLE_DEVICES=MIG-00000000-5555-6666-7777-000000000001"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		require.Len(t, r.Devices, 1)
		assert.Equal(t, uint64(10<<30), r.Devices[0].TotalMemory)
		assert.True(t, r.Devices[0].ReservedKnown, "v2 asked of the MIG handle too")
		assert.Equal(t, uint64(80<<30-480<<20), r.All[0].TotalMemory, "the GPU: total - reserved")
	}},
	{Name: "pre-R319 names", Defines: []string{"-DFAKE_V1_ONLY"}, Check: func(t *testing.T, r presence.Report, calls []string) {
		require.NoError(t, r.Err)
		assert.Len(t, r.Devices, 2)
		presencetest.Paired(t, calls, "nvmlInit", nvmlShutdown)
		assert.Contains(t, calls, "nvmlDeviceGetHandleByIndex")
	}},
	{Name: "found by the search", File: "libnvidia-ml-presencefake.so.1", NoOverride: true,
		Run: func(t *testing.T) presence.Report {
			dir := presencetest.LibDir()
			return NVML(presence.NewEnv(presence.WithSearch(func(l *clib.Library) {
				l.Sonames = []string{"libnvidia-ml-presencefake.so.1"}
				l.Dirs = []string{dir}
			})))
		},
		Check: func(t *testing.T, r presence.Report, calls []string) {
			require.NoError(t, r.Err)
			want := filepath.Join(presencetest.LibDir(), "libnvidia-ml-presencefake.so.1")
			assert.Equal(t, want, r.Library)
			require.Len(t, r.Attempts, 2, "the bare soname, then the folder")
			assert.Equal(t, "libnvidia-ml-presencefake.so.1", r.Attempts[0].Path)
			assert.NotEmpty(t, r.Attempts[0].Error)
			assert.Equal(t, want, r.Attempts[1].Path)
			assert.Empty(t, r.Attempts[1].Error)
			assert.Len(t, r.Devices, 2)
		}},
}

func TestNVMLReturnNames(t *testing.T) {
	presencetest.CodeNames(t, nvmlReturnNames, "NVML_", map[int]string{nvmlSuccess: "NVML_SUCCESS",
		nvmlNoPermission: "NVML_ERROR_NO_PERMISSION", nvmlDriverNotLoaded: "NVML_ERROR_DRIVER_NOT_LOADED", nvmlRMMismatch: "NVML_ERROR_LIB_RM_VERSION_MISMATCH"})
}

// BenchmarkNVML is one whole presence answer on the fake (two devices):
// open (a dlopen the loader answers from its table after the first), resolve
// the symbols, nvmlInit_v2, enumerate, nvmlShutdown. The fake is loaded into
// the benchmark's own process through an absolute override handed over by
// WithLookupEnv (never the environment), so no test of the process is
// affected: the tests that load a fake do so in children.
func BenchmarkNVML(b *testing.B) {
	p := fakeNVML.Build(b, dltest.PrivateDir(b), "")
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(NVMLEnvVar, p)))
	b.ReportAllocs()
	for b.Loop() {
		if r := NVML(e); r.Err != nil || len(r.Devices) != 2 {
			b.Fatalf("%v: %s", r.Err, r.Reason)
		}
	}
}
