package cli

import (
	"encoding/json"
	"fmt"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestParseQuery(t *testing.T) {
	tests := []struct {
		in      string
		want    []string // field names
		wantErr string
	}{
		{in: "index", want: []string{"index"}},
		{in: "index,uuid,name,pci.bus_id,memory.total,driver_version,compute_cap", want: []string{"index", "uuid", "name", "pci.bus_id", "memory.total", "driver_version", "compute_cap"}},
		{in: " index , name ", want: []string{"index", "name"}},
		{in: "gpu_name,gpu_uuid,gpu_bus_id", want: []string{"name", "uuid", "pci.bus_id"}},
		{in: "index,index", want: []string{"index", "index"}},
		{in: "visible_index,vendor,type,numa_node,tier", want: []string{"visible_index", "vendor", "type", "numa_node", "tier"}},
		{in: "", wantErr: "--query-gpu needs at least one field: valid fields are index, uuid, "},
		{in: "  ", wantErr: "--query-gpu needs at least one field"},
		{in: "index,bogus", wantErr: `--query-gpu=index,bogus: unknown field "bogus": valid fields are index, uuid, name, pci.bus_id,`},
		{in: "index,", wantErr: "--query-gpu=index,: an empty field: valid fields are"},
		{in: "Index", wantErr: `unknown field "Index"`},
		{in: "memory.total [MiB]", wantErr: `unknown field "memory.total [MiB]"`},
		{in: "a\nb", wantErr: `--query-gpu=a\nb: unknown field "a\nb"`},
		{in: strings.Repeat("index,", 1000), wantErr: "more than 4096: valid fields are"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseQuery(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.NotContains(t, err.Error(), "\n", "one line")
				return
			}
			require.NoError(t, err)
			var names []string
			for _, f := range got {
				names = append(names, f.name)
			}
			assert.Equal(t, tt.want, names)
		})
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in      string
		want    queryFormat
		wantErr string
	}{
		{in: "csv"},
		{in: "csv,noheader", want: queryFormat{noHeader: true}},
		{in: "csv,nounits", want: queryFormat{noUnits: true}},
		{in: "csv,noheader,nounits", want: queryFormat{noHeader: true, noUnits: true}},
		{in: "csv,nounits,noheader", want: queryFormat{noHeader: true, noUnits: true}},
		{in: "nounits,csv", want: queryFormat{noUnits: true}},
		{in: "", wantErr: `--format=: an empty option: accepted: csv, csv,noheader, csv,nounits, csv,noheader,nounits`},
		{in: "json", wantErr: `--format=json: unknown option "json": accepted: csv,`},
		{in: "noheader", wantErr: `--format=noheader: csv is the one format: accepted:`},
		{in: "csv,", wantErr: "an empty option"},
		{in: "CSV", wantErr: `unknown option "CSV"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseFormat(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// The CSV is nvidia-smi's: headers with units, ", " between values,
// "[N/A]" for what is unknown, units dropped by nounits.
func TestWriteCSV(t *testing.T) {
	recs := []device.Record{
		{Index: 0, VisibleIndex: 1, UUID: "GPU-8a1f", Name: "NVIDIA H100 80GB HBM3", PCIBusID: "0000:1b:00.0",
			TotalMemory: 85017493504, ReservedMemory: 503316480, FreeMemory: 79 << 30, DriverVersion: "580.95.05", Major: 9, Minor: 0, Type: "cuda", Vendor: "nvidia", NUMANode: 0, Tier: "presence", Usable: true},
		{Index: -1, VisibleIndex: -1, Type: "cuda", NUMANode: -1, Tier: "presence", Reason: "cuInit: CUDA_ERROR_NO_DEVICE, no",
			Unknown: map[string]string{"major": "x", "free_memory": "x", "numa_node": "x"}},
	}
	fields, err := parseQuery("index,uuid,name,pci.bus_id,memory.total,memory.free,driver_version,compute_cap,visible_index,numa_node,usable,reason,count")
	require.NoError(t, err)
	var b strings.Builder
	writeCSV(&b, fields, queryFormat{}, recs)
	assert.Equal(t, "index, uuid, name, pci.bus_id, memory.total [MiB], memory.free [MiB], driver_version, compute_cap, visible_index, numa_node, usable, reason, count\n"+
		"0, GPU-8a1f, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559 MiB, 80896 MiB, 580.95.05, 9.0, 1, 0, Yes, [N/A], 2\n"+
		`[N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], [N/A], No, "cuInit: CUDA_ERROR_NO_DEVICE, no", 2`+"\n", b.String())
	b.Reset()
	writeCSV(&b, fields[:5], queryFormat{noHeader: true, noUnits: true}, recs[:1])
	assert.Equal(t, "0, GPU-8a1f, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 81559\n", b.String())
}

// memory.* are nvidia-smi's (an H100 80GB HBM3, driver 580.159.04): the
// record's total is the driver's, memory.total adds the reserve, used is
// what is allocated; a reserve no source told leaves the total alone.
func TestQueryMemoryFields(t *testing.T) {
	h100 := device.Record{TotalMemory: 85017493504, ReservedMemory: 503316480, FreeMemory: 85017493504 - 1<<20}
	noReserve := device.Record{TotalMemory: 85017493504, FreeMemory: 80000 << 20, Unknown: map[string]string{"reserved_memory": "the driver does not tell it"}}
	noFree := device.Record{TotalMemory: 85017493504, ReservedMemory: 503316480, Unknown: map[string]string{"free_memory": "no context"}}
	fields, err := parseQuery("memory.total,memory.reserved,memory.used,memory.free")
	require.NoError(t, err)
	var b strings.Builder
	writeCSV(&b, fields, queryFormat{noUnits: true}, []device.Record{h100, noReserve, noFree, {}})
	assert.Equal(t, "memory.total [MiB], memory.reserved [MiB], memory.used [MiB], memory.free [MiB]\n"+
		"81559, 480, 1, 81078\n"+
		"81079, [N/A], 1079, 80000\n"+
		"81559, 480, [N/A], [N/A]\n"+
		"[N/A], [N/A], [N/A], [N/A]\n", b.String())
}

// FuzzQuery: no --query-gpu or --format value makes the parsers panic or
// accept what they should not; an accepted query prints one line per
// record, each with one value per field.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{"index", "index,uuid", "gpu_name, memory.total", "", ",", "index,,name", "memory.used\x00", "name\n,uuid"} {
		f.Add(s, "csv,noheader")
	}
	f.Add("index", "csv,nounits,noheader")
	f.Add("count", "csv,")
	f.Fuzz(func(t *testing.T, q, format string) {
		fields, err := parseQuery(q)
		if err != nil {
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Contains(t, err.Error(), "--query-gpu")
			return
		}
		require.NotEmpty(t, fields)
		for _, fld := range fields {
			require.NotNil(t, fld)
		}
		fm, err := parseFormat(format)
		if err != nil {
			assert.Contains(t, err.Error(), "accepted: csv")
			return
		}
		recs := []device.Record{{Name: q, UUID: format, Reason: q + format, Index: -1, VisibleIndex: -1}, {Index: 3}}
		var b strings.Builder
		writeCSV(&b, fields, fm, recs)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		want := len(recs)
		if !fm.noHeader {
			want++
		}
		require.Len(t, lines, want, "one line per record: %q", b.String())
	})
}

func TestQueryUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"query"}, "flagshim: query: --query-gpu needs at least one field: valid fields are index, uuid,"},
		{[]string{"query", "--query-gpu=index,nope"}, `flagshim: query: --query-gpu=index,nope: unknown field "nope": valid fields are index,`},
		{[]string{"query", "--query-gpu=index", "--format=xml"}, `flagshim: query: --format=xml: unknown option "xml": accepted: csv,`},
		{[]string{"query", "--query-gpu=index", "--format=csv,nounit"}, `flagshim: query: --format=csv,nounit: unknown option "nounit": accepted:`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out)
			assert.Regexp(t, `\Aflagshim: query: [^\n]+\nrun 'flagshim query -h' for the usage\n\z`, errOut, "one line, then where the usage is")
			assert.True(t, strings.HasPrefix(errOut, tt.msg), errOut)
		})
	}
	code, _, errOut := runCLI("query", "--query-gpu=index", "extra")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `query takes no arguments, got ["extra"]`)
}

// On TestMain's machine (no accelerator, no sysfs tree), query prints its
// header and exits 6, as nvidia-smi does where it finds no GPU.
func TestQueryNoDevice(t *testing.T) {
	code, out, errOut := runCLI("query", "--query-gpu=index,name")
	assert.Equal(t, exitNoDevice, code, errOut)
	assert.Equal(t, "index, name\n", out)
	assert.Contains(t, errOut, "no accelerator found")
}

// fakeGPUMachine builds the fake libcuda and NVML of two GPUs that agree
// (names, UUIDs, memory, PCI addresses) and a sysfs tree holding them, and
// returns the child's environment. extra are added last. Their memory is
// an H100's with driver 580 in proportion: NVML's total is 80 GiB, 480 MiB
// of it reserved (nvmlDeviceGetMemoryInfo_v2), the driver's total
// (cuDeviceTotalMem) the rest.
func fakeGPUMachine(t *testing.T, extra ...string) []string {
	t.Helper()
	dir := dltest.PrivateDir(t)
	cuda := vendorstest.Driver(t, cuda.Vendor(), dir)
	nvml := vendorstest.Management(t, "nvml", dir)
	tr := presencetest.NewTree(t)
	for i := 0; i < 2; i++ {
		addr := fmt.Sprintf("0000:%02x:00.0", 0x18+i)
		d := "sys/bus/pci/devices/" + addr + "/"
		tr.File(d+"vendor", "0x10de\n").File(d+"device", "0x2330\n").File(d+"class", "0x030200\n").
			File(d+"numa_node", fmt.Sprintf("%d\n", i)).File(d+"local_cpulist", fmt.Sprintf("%d-%d\n", 8*i, 8*i+7)).
			Link(d+"driver", "../../../../bus/pci/drivers/nvidia")
	}
	tr.Link("sys/bus/pci/drivers/nvidia/module", "../../../../module/nvidia").File("sys/module/nvidia/version", "550.54.15\n")
	env := []string{
		"FLAGOS_LIBCUDA_PATH=" + cuda, "FLAGOS_LIBNVML_PATH=" + nvml, "FLAGOS_TEST_ROOT=" + tr.Root,
		"FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1", "FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6",
		"FAKE_CUDA_DEVICE_NAMES=NVIDIA Fake H100,NVIDIA Fake H100",
		"FAKE_NVML_NAMES=NVIDIA Fake H100,NVIDIA Fake H100",
		"FAKE_NVML_UUIDS=GPU-10111213-1415-1617-1819-1a1b1c1d1e1f,GPU-20212223-2425-2627-2829-2a2b2c2d2e2f",
		"FAKE_NVML_CUDA=13000",
		fmt.Sprintf("FAKE_CUDA_TOTAL_MEM=%d", fakeDriverTotal), "FAKE_NVML_RESERVED_MB=480",
	}
	return append(env, extra...)
}

const smiFields = "index,uuid,name,pci.bus_id,memory.total,driver_version,compute_cap"

// fakeDriverTotal is fakeGPUMachine's cuDeviceTotalMem: NVML's 80 GiB less
// the 480 MiB reserve. Every tier's record has it as total_memory; query's
// memory.total is NVML's 81920 MiB in every tier.
const fakeDriverTotal = 80<<30 - 480<<20

// The same query gives the same rows in every tier, as nvidia-smi would
// print them; the flagshim fields say which tier answered.
func TestQueryTiersAgree(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), fakeGPUMachine(t)...)
		return
	}
	want := "index, uuid, name, pci.bus_id, memory.total [MiB], driver_version, compute_cap\n" +
		"0, GPU-10111213-1415-1617-1819-1a1b1c1d1e1f, NVIDIA Fake H100, 00000000:18:00.0, 81920 MiB, 550.54.15, 9.0\n" +
		"1, GPU-20212223-2425-2627-2829-2a2b2c2d2e2f, NVIDIA Fake H100, 00000000:19:00.0, 81920 MiB, 550.54.15, 9.0\n"
	code, out, errOut := runCLI("query", "--query-gpu="+smiFields, "--format=csv")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, want, out, "the default tier (presence: NVML)")
	assert.Empty(t, errOut)

	code, out, _ = runCLI("query", "--query-gpu=visible_index,vendor,type,numa_node,tier,memory.total,memory.reserved,memory.used,memory.free", "--format=csv,noheader,nounits")
	require.Equal(t, exitOK, code)
	assert.Equal(t, "0, nvidia, cuda, 0, presence, 81920, 480, 1024, 80416\n1, nvidia, cuda, 1, presence, 81920, 480, 1024, 80416\n", out,
		"nvidia-smi's meanings: the whole memory, the reserve, what is allocated, what is free")
	checkListRecords(t, "presence")
}

// checkListRecords checks list --json's records: the driver's total in
// every tier, the reserve beside it.
func checkListRecords(t *testing.T, tier string) {
	t.Helper()
	code, out, errOut := runCLI("list", "--json", "--accelerators-only")
	require.Equal(t, exitOK, code, errOut)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Devices, 2)
	for _, d := range l.Devices {
		require.NotNil(t, d.Record)
		assert.Equal(t, tier, d.Record.Tier)
		assert.Equal(t, uint64(fakeDriverTotal), d.Record.TotalMemory, "%s: the driver's total (torch's total_memory)", d.Device)
		assert.Equal(t, uint64(480<<20), d.Record.ReservedMemory, "%s: NVML's reserve", d.Device)
		assert.Empty(t, d.Record.Unknown["reserved_memory"], d.Device)
	}
}

// The exact tier (Init runs once per process: each tier is a child).
func TestQueryExactTier(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), fakeGPUMachine(t)...)
		return
	}
	code, out, errOut := runCLI("query", "--probe", "exact", "--query-gpu="+smiFields+",tier,memory.reserved,memory.used,memory.free", "--format=csv,noheader")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "0, GPU-10111213-1415-1617-1819-1a1b1c1d1e1f, NVIDIA Fake H100, 00000000:18:00.0, 81920 MiB, 550.54.15, 9.0, exact, 480 MiB, 1024 MiB, 80416 MiB\n"+
		"1, GPU-20212223-2425-2627-2829-2a2b2c2d2e2f, NVIDIA Fake H100, 00000000:19:00.0, 81920 MiB, 550.54.15, 9.0, exact, 480 MiB, 1024 MiB, 80416 MiB\n", out,
		"memory.total is nvidia-smi's: the driver's total and NVML's reserve; free memory is NVML's (no context created)")
	checkListRecords(t, "exact")

	code, out, errOut = runCLI("list", "--json", "--accelerators-only")
	require.Equal(t, exitOK, code, errOut)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Devices, 2)
	r := l.Devices[1].Record
	require.NotNil(t, r)
	assert.Equal(t, "cuda:1", r.Device)
	assert.Equal(t, 1, r.Index)
	assert.Equal(t, "0000:19:00.0", r.PCIBusID)
	assert.Equal(t, "8-15", r.LocalCPUs)
	assert.Equal(t, "550.54.15", r.DriverVersion, "the kernel module's version (sysfs)")
	assert.Equal(t, "13.0", r.DriverAPIVersion)
	assert.Equal(t, device.VendorNames{FlagOS: "nvidia", FlagGems: "nvidia", FlagCX: "CUDA", FlagTree: "nvidia"}, r.VendorNames)
	assert.Empty(t, r.Conflicts)
	assert.Empty(t, l.Unusable)
}

// The isolated tier: the exact answer from a child process, the same rows.
func TestQueryIsolatedTier(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), fakeGPUMachine(t)...)
		return
	}
	code, out, errOut := runCLI("query", "--probe", "isolated", "--query-gpu="+smiFields+",tier,driver_api_version,memory.reserved", "--format=csv,noheader")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "0, GPU-10111213-1415-1617-1819-1a1b1c1d1e1f, NVIDIA Fake H100, 00000000:18:00.0, 81920 MiB, 550.54.15, 9.0, isolated, 13.0, 480 MiB\n"+
		"1, GPU-20212223-2425-2627-2829-2a2b2c2d2e2f, NVIDIA Fake H100, 00000000:19:00.0, 81920 MiB, 550.54.15, 9.0, isolated, 13.0, 480 MiB\n", out)
	checkListRecords(t, "isolated")
}
