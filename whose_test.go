package flagshim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/maca"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/cli"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// The policy for CUDA-compatible runtimes (docs/architecture.md, "Whose
// runtime answers"): a working libcuda.so.1 serves cuda whoever made it, so
// the alias stays off and cuda code runs there as it is; the report names
// its maker from facts (never NVIDIA for another maker's runtime); and
// flagos still routes to the family's native backend where one is there,
// first under auto, or as FLAGOS_BACKEND names it.

type whoseMachine struct {
	name    string
	cudaDir string   // where libcuda.so.1 sits under the machine's folder
	env     []string // FAKE_* settings
	pci     string   // sysfs PCI vendor id of the fake's devices ("" none)
	native  bool     // the MetaX native runtime (the fake libmcruntime) is there too
	backend string   // FLAGOS_BACKEND ("" unset)
	vendor  string   // whose runtime answers cuda, in every tier
	route   device.Type
}

var whoseMachines = []whoseMachine{
	{name: "corex", cudaDir: "usr/local/corex/lib64", env: []string{"FAKE_CUDA_DEVICE_NAMES=Iluvatar BI-V150S,Iluvatar BI-V150S"},
		vendor: "Iluvatar CoreX", route: device.CUDA},
	{name: "ppu", cudaDir: "usr/lib64", env: []string{"FAKE_CUDA_DEVICE_NAMES=PPU-ZW810E,PPU-ZW810E"},
		vendor: "T-Head PPU", route: device.CUDA},
	{name: "corex by sysfs", cudaDir: "usr/lib64", pci: "0x1e3e", vendor: "Iluvatar CoreX", route: device.CUDA},
	{name: "metax bridge and native, auto", cudaDir: "opt/maca/tools/cu-bridge/lib", pci: "0x9999", native: true,
		vendor: "MetaX cu-bridge", route: "maca"},
	{name: "metax bridge and native, FLAGOS_BACKEND=maca", cudaDir: "opt/maca/tools/cu-bridge/lib", pci: "0x9999", native: true,
		backend: "maca", vendor: "MetaX cu-bridge", route: "maca"},
	{name: "metax bridge and native, FLAGOS_BACKEND=cuda", cudaDir: "opt/maca/tools/cu-bridge/lib", pci: "0x9999", native: true,
		backend: "cuda", vendor: "MetaX cu-bridge", route: device.CUDA},
	{name: "nvidia by sysfs", cudaDir: "usr/lib64", pci: "0x10de", vendor: "NVIDIA", route: device.CUDA},
	{name: "nothing says", cudaDir: "usr/lib64", vendor: "unknown", route: device.CUDA},
}

// whoseObserved is what the child saw.
type whoseObserved struct {
	InitErr  string
	Alias    bool
	Route    device.Type
	CUDAName string                 // what Properties(0).Vendor of cuda says
	Info     map[string]report.Info // info --json by --probe
	Explain  string
	Resolve  string
}

func TestCUDACompatibleRuntimes(t *testing.T) {
	buildFakes(t)
	for _, m := range whoseMachines {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			base := dltest.PrivateDir(t)
			dir := filepath.Join(base, m.cudaDir)
			require.NoError(t, os.MkdirAll(dir, 0o755))
			lib := vendorstest.Driver(t, cuda.Vendor(), dir)
			tr := presencetest.NewTree(t)
			if m.pci != "" {
				for _, bus := range []string{"0000:18:00.0", "0000:19:00.0"} {
					tr.File("sys/bus/pci/devices/"+bus+"/vendor", m.pci+"\n").File("sys/bus/pci/devices/"+bus+"/class", "0x030200\n")
				}
			}
			out := filepath.Join(t.TempDir(), "observed.json")
			env := append(hiddenLibraries(), "WHOSE_OUT="+out, "FLAGOS_LIBCUDA_PATH="+lib, "FLAGOS_TEST_ROOT="+tr.Root)
			if m.native {
				env = append(env, "FLAGOS_LIBMCRUNTIME_PATH="+vendorstest.Driver(t, maca.Vendor(), dltest.PrivateDir(t)))
			}
			if m.backend != "" {
				env = append(env, flagos.EnvVar+"="+m.backend)
			}
			dltest.MustChild(t, "TestWhoseChild", append(env, m.env...)...)
			raw, err := os.ReadFile(out)
			require.NoError(t, err)
			var o whoseObserved
			require.NoError(t, json.Unmarshal(raw, &o))

			require.Empty(t, o.InitErr)
			assert.False(t, o.Alias, "a working CUDA-compatible runtime serves cuda: no alias")
			assert.Equal(t, m.route, o.Route, "where flagos routes")
			assert.Equal(t, m.vendor, o.CUDAName, "device 0's maker, from the Go API")
			assert.Equal(t, "cuda:1", o.Resolve, "cuda:1 stays cuda's")
			for _, tier := range []string{"exact", "isolated"} {
				info, ok := o.Info[tier]
				require.True(t, ok, tier)
				var cuda, fl *report.Backend
				for i, be := range info.Backends {
					switch be.Type {
					case device.CUDA:
						cuda = &info.Backends[i]
					case device.FlagOS:
						fl = &info.Backends[i]
					}
				}
				require.NotNil(t, cuda, tier)
				require.True(t, cuda.Available, "%s: %s", tier, cuda.Reason)
				assert.Equal(t, m.vendor, cuda.Vendor, "%s: facts %v", tier, cuda.VendorFacts)
				if m.vendor != "NVIDIA" {
					assert.NotEqual(t, "NVIDIA", cuda.Vendor, tier)
				}
				assert.NotEmpty(t, cuda.VendorFacts, "%s: the facts are shown", tier)
				for _, p := range cuda.Properties {
					assert.Equal(t, m.vendor, p.Vendor, "%s: device %d", tier, p.Index)
				}
				require.NotNil(t, fl, tier)
				assert.Equal(t, m.route, fl.RoutesTo, tier)
				assert.False(t, info.Alias.Active, tier)
			}
			assert.Contains(t, o.Explain, "cuda is available with 2 device(s)")
			if m.vendor == "unknown" {
				assert.Contains(t, o.Explain, "Whose runtime answers is unknown: library ")
			} else {
				assert.Contains(t, o.Explain, "The runtime that answers is "+m.vendor+"'s: ")
			}
		})
	}
}

// TestWhoseChild is the child's side of TestCUDACompatibleRuntimes.
func TestWhoseChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as the child process of TestCUDACompatibleRuntimes")
	}
	var o whoseObserved
	rep, err := flagshim.Init(context.Background())
	if err != nil {
		o.InitErr = err.Error()
	}
	o.Alias = rep.Alias.Active
	for _, b := range device.Default.Backends() {
		if fl, ok := b.(*flagos.Backend); ok {
			if r, err := fl.Route(); err == nil {
				o.Route = r.Type()
			}
		}
	}
	if b, err := device.Lookup(device.CUDA); err == nil {
		if p, err := b.Properties(0); err == nil {
			o.CUDAName = p.Vendor
		}
	}
	o.Info = map[string]report.Info{}
	for _, tier := range []string{"exact", "isolated"} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, cli.Run([]string{"info", "--json", "--probe", tier}, &stdout, &stderr), stderr.String())
		var info report.Info
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &info))
		o.Info[tier] = info
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, cli.Run([]string{"explain", "--probe", "exact"}, &stdout, &stderr), stderr.String())
	o.Explain = stdout.String()
	stdout.Reset()
	require.Equal(t, 0, cli.Run([]string{"resolve", "cuda:1"}, &stdout, &stderr), stderr.String())
	o.Resolve = string(bytes.TrimSpace(stdout.Bytes()))
	b, err := json.Marshal(o)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv("WHOSE_OUT"), b, 0o600))
}

// hiddenLibraries points every registered vendor's driver and management
// library override (and NVSHMEM's) at a file that does not exist: only the
// fakes a scenario names answer, never the host's own libraries.
func hiddenLibraries() []string {
	var env []string
	for _, v := range flagshim.Variables() {
		name := v.Name
		if strings.HasPrefix(name, "FLAGOS_LIB") && strings.HasSuffix(name, "_PATH") {
			env = append(env, name+"="+filepath.Join(fakes.missing, strings.ToLower(name)+".so"))
		}
	}
	return env
}
