package cli

import (
	"fmt"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// The scale of list and query in the presence tier (docs/benchmarks.md):
// how their time and memory grow with the devices a machine has. Two
// views, both on fakes:
//
//   - BenchmarkPresenceList and BenchmarkPresenceQuery run the flagshim
//     binary as a user does, on the fake NVML (and libcuda, found but not
//     opened) with 8, 64, 512 and 4096 GPUs in a sysfs tree: each op is a
//     whole process (Go's start, Init, NVML's six calls a GPU, sysfs, the
//     output), its peak RSS reported as maxrss-KiB (through GNU time).
//   - BenchmarkRecords makes every device's record and the query's CSV in
//     this process from the presence tier's facts, the part of the work
//     that is flagshim's own, for the same sizes and for 8 GPUs x 7 MIG
//     instances (56 partitions, each naming its parent), reporting
//     ns/device.

var scaleSizes = []int{8, 64, 512, 4096}

// scaleTree is a sysfs root holding n NVIDIA GPUs at the fake NVML's
// addresses (device i at bus 0x18 + i, the next domain past bus 0xff),
// bound to the nvidia driver, whose module gives a version.
func scaleTree(tb testing.TB, n int) string {
	tr := presencetest.NewBigTree(tb)
	for i := 0; i < n; i++ {
		at := 0x18 + i
		d := fmt.Sprintf("sys/bus/pci/devices/%04x:%02x:00.0/", at>>8, at&0xff)
		tr.File(d+"vendor", "0x10de\n").File(d+"device", "0x2330\n").File(d+"class", "0x030200\n").
			File(d+"numa_node", fmt.Sprintf("%d\n", i%2)).File(d+"local_cpulist", "0-7\n").
			Link(d+"driver", "../../../../bus/pci/drivers/nvidia")
	}
	tr.Link("sys/bus/pci/drivers/nvidia/module", "../../../../module/nvidia").File("sys/module/nvidia/version", "550.54.15\n")
	return tr.Root
}

func benchCLI(b *testing.B, args ...string) {
	if dltest.CC() == "" {
		b.Skip("no C compiler to build the fake NVML")
	}
	exe := dltest.GoBuild(b, "../cmd/flagshim", "flagshim")
	dir := dltest.PrivateDir(b)
	nvml := vendorstest.Management(b, "nvml", dir)
	libcuda := vendorstest.Driver(b, cuda.Vendor(), dir)
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			env := append(os.Environ(), "FLAGOS_PROBE=presence", "FLAGOS_TEST_ROOT="+scaleTree(b, n),
				"FLAGOS_LIBNVML_PATH="+nvml, "FLAGOS_LIBCUDA_PATH="+libcuda, fmt.Sprintf("FAKE_NVML_COUNT=%d", n))
			// The peak RSS comes from GNU time where it is installed: the
			// rusage of a child this process starts would include this
			// process's own (the kernel keeps the high-water mark of the
			// memory a vfork shares across the exec).
			timer, _ := exec.LookPath("/usr/bin/time")
			var rss int64
			b.ResetTimer()
			for range b.N {
				cmd := exec.Command(exe, args...)
				if timer != "" {
					cmd = exec.Command(timer, append([]string{"-f", "maxrss=%M", exe}, args...)...)
				}
				cmd.Env = env
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				require.NoError(b, err, "%s%s", out, stderr.String())
				require.GreaterOrEqual(b, strings.Count(string(out), "\n"), n)
				if _, kib, ok := strings.Cut(strings.TrimSpace(stderr.String()), "maxrss="); ok {
					if v, err := strconv.ParseInt(kib, 10, 64); err == nil && v > rss {
						rss = v
					}
				}
			}
			if timer != "" {
				b.ReportMetric(float64(rss), "maxrss-KiB")
			}
		})
	}
}

func BenchmarkPresenceList(b *testing.B) { benchCLI(b, "list", "--accelerators-only") }

func BenchmarkPresenceQuery(b *testing.B) {
	benchCLI(b, "query", "--query-gpu=index,uuid,name,pci.bus_id,memory.total,driver_version,compute_cap,numa_node", "--format=csv")
}

// scaleFacts is what the presence tier learns of n GPUs (of per
// partitions each: a MIG instance names its GPU as its parent).
func scaleFacts(n, per int) func(*driver.Backend) tier.Facts {
	return func(b *driver.Backend) tier.Facts {
		f := tier.Facts{Tier: tier.Presence, Source: "nvml", DriverVersion: "550.54.15", APIVersion: "13.0"}
		for i := 0; i < n; i++ {
			parent := fmt.Sprintf("GPU-%08x-1111-2222-3333-444444444444", i)
			at := 0x18 + i
			bus := fmt.Sprintf("%08X:%02X:00.0", at>>8, at&0xff)
			for p := 0; p < max(per, 1); p++ {
				d := device.Properties{Name: "NVIDIA H100 80GB HBM3", Vendor: "NVIDIA", UUID: parent, TotalMemory: 80 << 30, Major: 9}
				par := ""
				if per > 0 {
					d.Name, d.UUID, d.TotalMemory, par = "NVIDIA H100 80GB HBM3 MIG 1g.10gb", fmt.Sprintf("MIG-%08x-%04x-2222-3333-444444444444", i, p), 10<<30, parent
				}
				f.Devices = append(f.Devices, d)
				f.PCIBusIDs = append(f.PCIBusIDs, bus)
				f.FreeMemory = append(f.FreeMemory, 1<<30)
				f.Indexes = append(f.Indexes, i)
				f.Parents = append(f.Parents, par)
			}
		}
		f.Result = probe.Result{Available: true, Devices: len(f.Devices), Reason: "presence"}
		return f
	}
}

func BenchmarkRecords(b *testing.B) {
	fields, err := parseQuery("index,uuid,name,pci.bus_id,memory.total,memory.used,driver_version,compute_cap,numa_node,parent")
	require.NoError(b, err)
	type size struct {
		name   string
		n, per int
	}
	var sizes []size
	for _, n := range scaleSizes {
		sizes = append(sizes, size{fmt.Sprintf("devices=%d", n), n, 0})
	}
	sizes = append(sizes, size{"mig=8x7", 8, 7})
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			root := scaleTree(b, sz.n)
			devs := sz.n * max(sz.per, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				be := driver.New(cuda.Vendor(), driver.WithFacts(scaleFacts(sz.n, sz.per)), driver.WithSysRoot(root),
					driver.WithLibrary(clib.Library{Name: "libcuda", Sonames: []string{"libcuda.so.1"}, Dirs: []string{filepath.Join(root, "lib")}}))
				recs := make([]device.Record, 0, devs)
				for i := 0; i < devs; i++ {
					r, err := be.Record(i)
					if err != nil {
						b.Fatal(err)
					}
					recs = append(recs, r)
				}
				var sb strings.Builder
				writeCSV(&sb, fields, queryFormat{}, recs)
				if strings.Count(sb.String(), "\n") != devs+1 {
					b.Fatalf("%d lines for %d devices", strings.Count(sb.String(), "\n"), devs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(devs), "ns/device")
		})
	}
}
