//go:build gpu

// Tests against the real CUDA driver. Built by scripts/gpu-build.sh with
// CGO_ENABLED=0 go test -c -tags gpu and run by scripts/gpu-run.sh on a
// machine with an NVIDIA GPU. gpu-run.sh passes nvidia-smi's view in the
// environment as a second source:
//
//	FLAGSHIM_NVSMI             lines "uuid|memory.total|memory.reserved|pci.bus_id|name"
//	                           (MiB; memory.reserved empty on old drivers)
//	FLAGSHIM_NVSMI_CC          lines "uuid|compute_cap" ("GPU-...|9.0")
//	FLAGSHIM_NVSMI_DRIVER      nvidia-smi's driver version ("580.95.05")
//
// No GPU model is assumed: every device's name and compute capability are
// compared with nvidia-smi's for the same UUID. Two optional checks of the
// caller's own, unset by default:
//
//	FLAGSHIM_GPU_EXPECT_NAME   a substring of every device name
//	FLAGSHIM_GPU_EXPECT_CC     the compute capability of every device ("9.0")

package cuda

import (
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

var gpu = sync.OnceValue(func() *driver.Backend {
	log := zap.NewNop()
	if os.Getenv("FLAGSHIM_GPU_LOG") != "" {
		log, _ = zap.NewDevelopment()
	}
	return New(driver.WithLogger(log))
})

func gpuBackend(t testing.TB) *driver.Backend {
	t.Helper()
	b := gpu()
	r := b.Available()
	require.True(t, r.Available, "cuda not available: %s", r.Reason)
	return b
}

type smiGPU struct {
	uuid, pci, name     string
	memMiB, reservedMiB uint64
	haveReserved        bool
}

func nvsmi(t *testing.T) map[string]smiGPU {
	m := map[string]smiGPU{}
	for _, line := range strings.Split(os.Getenv("FLAGSHIM_NVSMI"), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 5 {
			continue
		}
		var g smiGPU
		g.uuid, g.pci, g.name = strings.TrimSpace(f[0]), strings.TrimSpace(f[3]), strings.TrimSpace(f[4])
		fmt.Sscan(strings.TrimSpace(f[1]), &g.memMiB)
		_, err := fmt.Sscan(strings.TrimSpace(f[2]), &g.reservedMiB)
		g.haveReserved = err == nil
		m[g.uuid] = g
	}
	return m
}

// nvsmiCC is nvidia-smi's compute capability of each GPU, by UUID
// (FLAGSHIM_NVSMI_CC); empty where it was not given.
func nvsmiCC() map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(os.Getenv("FLAGSHIM_NVSMI_CC"), "\n") {
		uuid, cc, ok := strings.Cut(line, "|")
		if cc = strings.TrimSpace(cc); ok && cc != "" && !strings.Contains(cc, "N/A") && !strings.Contains(cc, "[") {
			m[strings.TrimSpace(uuid)] = cc
		}
	}
	return m
}

// pciKey normalises a PCI address: the driver and nvidia-smi pad the domain
// differently ("0000:18:00.0", "00000000:18:00.0").
func pciKey(s string) string {
	var dom, bus, dev, fn uint64
	if _, err := fmt.Sscanf(strings.ToLower(s), "%x:%x:%x.%x", &dom, &bus, &dev, &fn); err != nil {
		return s
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", dom, bus, dev, fn)
}

func TestGPUAvailable(t *testing.T) {
	b := gpuBackend(t)
	info := b.Describe()
	t.Logf("probe: %+v", b.Available())
	t.Logf("library %s, driver %s, attempts %+v, extra %v", info.Library, info.DriverVersion, info.Attempts, info.Extra)
	major, minor, err := b.DriverVersion()
	require.NoError(t, err)
	t.Logf("cuDriverGetVersion: %d.%d; nvidia-smi driver %s", major, minor, os.Getenv("FLAGSHIM_NVSMI_DRIVER"))
	assert.GreaterOrEqual(t, major, 11)
	assert.NotEmpty(t, info.Library)
}

func TestGPUDeviceCount(t *testing.T) {
	b := gpuBackend(t)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	require.Positive(t, n)
	assert.Equal(t, n, b.Available().Devices)
	if smi := nvsmi(t); len(smi) > 0 && os.Getenv("CUDA_VISIBLE_DEVICES") == "" {
		assert.Equal(t, len(smi), n, "nvidia-smi and the driver agree on the count")
	}
	t.Logf("%d device(s)", n)
}

func TestGPUProperties(t *testing.T) {
	b := gpuBackend(t)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	smi, smiCC := nvsmi(t), nvsmiCC()
	wantName := os.Getenv("FLAGSHIM_GPU_EXPECT_NAME")
	wantCC := os.Getenv("FLAGSHIM_GPU_EXPECT_CC")
	for i := 0; i < n; i++ {
		p, err := b.Properties(i)
		require.NoError(t, err)
		pci, pciErr := b.PCIBusID(i)
		free, total, err := b.MemInfo(i)
		require.NoError(t, err)
		t.Logf("device %d: %q %s cc %d.%d, %d SMs, cuDeviceTotalMem %d B (%.0f MiB), cuMemGetInfo total %d free %d, pci %s %v",
			i, p.Name, p.UUID, p.Major, p.Minor, p.MultiProcessors, p.TotalMemory, float64(p.TotalMemory)/(1<<20), total, free, pci, pciErr)
		assert.Equal(t, "NVIDIA", p.Vendor)
		assert.NotEmpty(t, strings.TrimSpace(p.Name), "the driver names the device")
		assert.Positive(t, p.Major, "a compute capability")
		if cc, ok := smiCC[p.UUID]; ok {
			assert.Equal(t, cc, fmt.Sprintf("%d.%d", p.Major, p.Minor), "nvidia-smi's compute_cap")
		}
		if wantName != "" {
			assert.Contains(t, p.Name, wantName)
		}
		if wantCC != "" {
			assert.Equal(t, wantCC, fmt.Sprintf("%d.%d", p.Major, p.Minor))
		}
		assert.Positive(t, p.MultiProcessors)
		// Second path inside the driver: the context's view of memory.
		assert.Equal(t, p.TotalMemory, total, "cuDeviceTotalMem_v2 and cuMemGetInfo_v2 agree")
		assert.LessOrEqual(t, free, total)
		assert.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, p.UUID)
		require.NoError(t, pciErr)
		// Third path, outside the process: nvidia-smi, matched by UUID.
		if len(smi) > 0 {
			g, ok := smi[p.UUID]
			if assert.True(t, ok, "nvidia-smi lists %s", p.UUID) {
				assert.Equal(t, g.name, p.Name)
				assert.Equal(t, pciKey(g.pci), pciKey(pci))
				// nvidia-smi's memory.total is the whole framebuffer; the
				// driver's total leaves out what the driver and firmware
				// reserve (nvidia-smi's memory.reserved).
				mib := float64(p.TotalMemory) / (1 << 20)
				t.Logf("nvidia-smi: memory.total %d MiB, memory.reserved %d MiB (%v); driver %.1f MiB",
					g.memMiB, g.reservedMiB, g.haveReserved, mib)
				assert.LessOrEqual(t, mib, float64(g.memMiB))
				assert.GreaterOrEqual(t, mib, 0.99*float64(g.memMiB))
				if g.haveReserved {
					assert.LessOrEqual(t, math.Abs(mib-float64(g.memMiB-g.reservedMiB)), 1.0,
						"driver %.1f MiB = nvidia-smi total %d - reserved %d MiB", mib, g.memMiB, g.reservedMiB)
				}
			}
		}
	}
}

func TestGPUConcurrentSetCurrentSynchronize(t *testing.T) {
	b := gpuBackend(t)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	const goroutines, iters = 64, 300
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < iters; i++ {
				d := (g + i) % n
				if err := b.SetCurrent(d); err != nil {
					errs <- fmt.Errorf("SetCurrent(%d): %w", d, err)
					return
				}
				if err := b.Synchronize(d); err != nil {
					errs <- fmt.Errorf("Synchronize(%d): %w", d, err)
					return
				}
				if err := b.Synchronize(-1); err != nil {
					errs <- fmt.Errorf("Synchronize(-1): %w", err)
					return
				}
				if c, err := b.Current(); err != nil || c < 0 || c >= n {
					errs <- fmt.Errorf("Current() = %d, %v", c, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	err = b.SetCurrent(n)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	t.Logf("%d goroutines x %d iterations over %d device(s); out of range: %v", goroutines, iters, n, err)
}

func BenchmarkGPUCurrent(b *testing.B) {
	be := gpuBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := be.Current(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGPUSetCurrent(b *testing.B) {
	be := gpuBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := be.SetCurrent(0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGPUSynchronize(b *testing.B) {
	be := gpuBackend(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := be.Synchronize(0); err != nil {
			b.Fatal(err)
		}
	}
}
