package flagshim

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/gcu"
	"github.com/flagos-ai/flagshim/drivers/hip"
	"github.com/flagos-ai/flagshim/drivers/kunlunxin"
	"github.com/flagos-ai/flagshim/drivers/maca"
	"github.com/flagos-ai/flagshim/drivers/mlu"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/drivers/npu"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
	"github.com/flagos-ai/flagshim/visible"
)

// selectCase is one vendor on its fake: a parent's environment (the fake's
// variables and the parent's own visible-devices variables), the devices
// selected, and what a child started with the selection must see.
type selectCase struct {
	vendor *driver.Vendor
	lib    presencetest.Lib         // the fake management library; Src "" for none
	tree   func(*presencetest.Tree) // the sysfs and /dev the source reads (HIP's KFD)
	env    []string
	specs  []string
	want   []string // the child's devices, in order: UUIDs, or "#" + the source's index
	err    error    // the selection is refused with this
}

var selectCases = map[string]selectCase{
	"cuda": {vendor: cuda.Vendor(), lib: presencetest.Lib{Src: "drivers/cuda/testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: cuda.NVMLEnvVar},
		// The parent sees GPUs 2 and 0; its index 0 is GPU 2.
		env: []string{"FAKE_NVML_COUNT=3", "CUDA_VISIBLE_DEVICES=2,0"}, specs: []string{"0", "GPU-00000001", "00000000:18:00.0"},
		want: []string{"GPU-00000002-1111-2222-3333-444444444444", "GPU-00000001-1111-2222-3333-444444444444", "GPU-00000000-1111-2222-3333-444444444444"}},
	"cuda_mig": {vendor: cuda.Vendor(), lib: presencetest.Lib{Src: "drivers/cuda/testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: cuda.NVMLEnvVar},
		env: []string{"FAKE_NVML_COUNT=2", "FAKE_NVML_MIG=-,3"}, specs: []string{"MIG-00000001-5555-6666-7777-000000000002"},
		want: []string{"MIG-00000001-5555-6666-7777-000000000002"}},
	"cuda_two_mig": {vendor: cuda.Vendor(), lib: presencetest.Lib{Src: "drivers/cuda/testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: cuda.NVMLEnvVar},
		env: []string{"FAKE_NVML_MIG=2"}, specs: []string{"MIG-00000000-5555-6666-7777-000000000000", "MIG-00000000-5555-6666-7777-000000000001"}, err: ErrSelection},
	"cuda_ambiguous": {vendor: cuda.Vendor(), lib: presencetest.Lib{Src: "drivers/cuda/testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: cuda.NVMLEnvVar},
		specs: []string{"GPU-0000000"}, err: ErrSelection},
	"cuda_out_of_range": {vendor: cuda.Vendor(), lib: presencetest.Lib{Src: "drivers/cuda/testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: cuda.NVMLEnvVar},
		env: []string{"CUDA_VISIBLE_DEVICES=1"}, specs: []string{"1"}, err: ErrSelection},
	"cuda_unknown_uuid": {vendor: cuda.Vendor(), lib: presencetest.Lib{Src: "drivers/cuda/testdata/fake_nvml.c", Soname: "libnvidia-ml.so.1", Override: cuda.NVMLEnvVar},
		specs: []string{"GPU-ffff"}, err: ErrSelection},
	"musa": {vendor: musa.Vendor(), lib: presencetest.Lib{Src: "drivers/musa/testdata/fake_mtml.c", Soname: "libmtml.so", Override: musa.MTMLEnvVar},
		env: []string{"FAKE_MTML_COUNT=3", "MUSA_VISIBLE_DEVICES=1,2"}, specs: []string{"1", "00000000-aaaa"},
		want: []string{"00000002-aaaa-bbbb-cccc-dddddddddddd", "00000000-aaaa-bbbb-cccc-dddddddddddd"}},
	"mlu": {vendor: mlu.Vendor(), lib: presencetest.Lib{Src: "drivers/mlu/testdata/fake_cndev.c", Soname: "libcndev.so", Override: mlu.CNDevEnvVar},
		env: []string{"FAKE_CNDEV_COUNT=3", "CN_VISIBLE_DEVICES=0,1,2"}, specs: []string{"MLU-00000002", "0"},
		want: []string{"MLU-00000002-aaaa-bbbb-cccc-dddddddddddd", "MLU-00000000-aaaa-bbbb-cccc-dddddddddddd"}},
	"npu": {vendor: npu.Vendor(), lib: presencetest.Lib{Src: "drivers/npu/testdata/fake_dcmi.c", Soname: "libdcmi.so", Override: npu.DCMIEnvVar},
		env: []string{"FAKE_DCMI_CARDS=3", "FAKE_DCMI_LOGIC_IDS=2,0,1"}, specs: []string{"0", "2"}, want: []string{"#0", "#2"}},
	"npu_out_of_order": {vendor: npu.Vendor(), lib: presencetest.Lib{Src: "drivers/npu/testdata/fake_dcmi.c", Soname: "libdcmi.so", Override: npu.DCMIEnvVar},
		env: []string{"FAKE_DCMI_CARDS=3"}, specs: []string{"2", "0"}, err: ErrSelection},
	"maca": {vendor: maca.Vendor(), lib: presencetest.Lib{Src: "drivers/maca/testdata/fake_mxsml.c", Soname: "libmxsml.so", Override: maca.MXSMLEnvVar},
		env: []string{"FAKE_MXSML_COUNT=3"}, specs: []string{"GPU-5f3c0000-1111-2222-3333-000000000002", "0000:3a:00.0"},
		want: []string{"GPU-5f3c0000-1111-2222-3333-000000000002", "GPU-5f3c0000-1111-2222-3333-000000000000"}},
	"maca_unknown_variable": {vendor: maca.Vendor(), lib: presencetest.Lib{Src: "drivers/maca/testdata/fake_mxsml.c", Soname: "libmxsml.so", Override: maca.MXSMLEnvVar},
		env: []string{"MACA_VISIBLE_DEVICES=0"}, specs: []string{"GPU-5f3c0000-1111-2222-3333-000000000001"}, err: ErrUndecidable},
	"gcu": {vendor: gcu.Vendor(), lib: presencetest.Lib{Src: "drivers/gcu/testdata/fake_efml.c", Soname: "libefml.so", Override: gcu.EFMLEnvVar},
		env: []string{"FAKE_EFML_COUNT=3", "TOPS_VISIBLE_DEVICES=2,1"}, specs: []string{"1", "00000000-1e36"},
		want: []string{"00000001-1e36-c035-0000-000000000001", "00000000-1e36-c035-0000-000000000000"}},
	"kunlunxin": {vendor: kunlunxin.Vendor(), lib: presencetest.Lib{Src: "drivers/kunlunxin/testdata/fake_xpuml.c", Soname: "libxpuml.so.1", Override: kunlunxin.XPUMLEnvVar},
		env: []string{"FAKE_XPUML_COUNT=3"}, specs: []string{"2", "1"}, want: []string{"#2", "#1"}},
	"hip": {vendor: hip.Vendor(), tree: func(tr *presencetest.Tree) {
		for n, id := range []uint64{0x1111, 0x2222, 0x3333} {
			dir := fmt.Sprintf("sys/class/kfd/kfd/topology/nodes/%d", n)
			tr.File(dir+"/properties", fmt.Sprintf("simd_count 304\ngfx_target_version 90402\nlocation_id %d\ndomain 0\nunique_id %d\n", 0x100*(n+1), id)).
				File(dir+"/name", "gfx942\n")
		}
		tr.Char("dev/kfd")
	}, env: []string{"ROCR_VISIBLE_DEVICES=2,0", "HIP_VISIBLE_DEVICES=1", "CUDA_VISIBLE_DEVICES=0"}, specs: []string{"0", "GPU-0000000000002222"},
		want: []string{"GPU-0000000000001111", "GPU-0000000000002222"}},
}

// The child's variables: its case, what it does, the tree's root, where it
// writes, and (for "see") the selection's variables.
const (
	selectCaseEnv = "SELECT_TEST_CASE"
	selectModeEnv = "SELECT_TEST_MODE" // "select" or "see"
	selectRootEnv = "SELECT_TEST_ROOT"
	selectOutEnv  = "SELECT_TEST_OUT"
)

// TestSelectChild: per vendor, on its fake, a child selects devices as the
// parent's environment names them (SelectEnv's work); a second child,
// started with the parent's environment and the selection, lists what its
// runtime's rules show it; it must be exactly the devices selected, in
// order.
func TestSelectChild(t *testing.T) {
	if dltest.IsChild(t) {
		selectChild(t)
		return
	}
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake management libraries")
	}
	for name, c := range selectCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := append([]string{selectCaseEnv + "=" + name}, c.env...)
			if c.lib.Src != "" {
				env = append(env, c.lib.Override+"="+c.lib.Build(t, dltest.PrivateDir(t), ""))
			}
			if c.tree != nil {
				tr := presencetest.NewTree(t)
				c.tree(tr)
				env = append(env, selectRootEnv+"="+tr.Root)
			}
			out := filepath.Join(t.TempDir(), "out.json")
			env = append(env, selectOutEnv+"="+out)
			dltest.MustChild(t, "TestSelectChild", append(env, selectModeEnv+"=select")...)
			var got struct {
				Settings []visible.Setting
				Err      string
			}
			readJSON(t, out, &got)
			if c.err != nil {
				assert.NotEmpty(t, got.Err, "refused")
				return
			}
			require.Empty(t, got.Err)
			require.NotEmpty(t, got.Settings)
			see := append([]string{}, env...)
			see = append(see, selectModeEnv+"=see")
			for _, s := range got.Settings {
				see = append(see, s.Name+"="+s.Value) // later entries win, as the child's own
			}
			dltest.MustChild(t, "TestSelectChild", see...)
			var seen []string
			readJSON(t, out, &seen)
			assert.Equal(t, c.want, seen, "the child sees exactly the devices selected (%v)", got.Settings)
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

func selectChild(t *testing.T) {
	c := selectCases[os.Getenv(selectCaseEnv)]
	opts := []presence.Option{}
	if root := os.Getenv(selectRootEnv); root != "" {
		opts = append(opts, presence.WithRoot(root))
	}
	e := presence.NewEnv(opts...)
	var out any
	switch os.Getenv(selectModeEnv) {
	case "select":
		sel, err := selectFrom(c.vendor, e, c.specs)
		res := struct {
			Settings []visible.Setting
			Err      string
		}{}
		if err != nil {
			res.Err = err.Error()
			if c.err != nil {
				assert.ErrorIs(t, err, c.err)
				assert.NotContains(t, err.Error(), "\n", "one line")
			}
		} else {
			res.Settings = sel.Settings
			require.Len(t, sel.Devices, len(c.specs))
		}
		out = res
	case "see":
		var devs []string
		for _, r := range c.vendor.Presence(e) {
			if r.Err == nil && len(r.All) > 0 {
				for _, d := range r.Devices {
					if d.UUID != "" {
						devs = append(devs, d.UUID)
					} else {
						devs = append(devs, fmt.Sprintf("#%d", d.SourceIndex))
					}
				}
				break
			}
			require.False(t, errors.Is(r.Err, presence.ErrUndecidable), "%s: %s", r.Source, r.Reason)
		}
		out = devs
	}
	b, err := json.Marshal(out)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv(selectOutEnv), b, 0o600))
}

// TestSelectSpecs: the forms a device is named by, and the one line each
// bad one gets.
func TestSelectSpecs(t *testing.T) {
	r := &presence.Report{Source: "kit", All: []presence.Device{
		{UUID: "GPU-aaaa1111", PCIBusID: "00000000:18:00.0", SourceIndex: 0},
		{UUID: "GPU-aaaa2222", PCIBusID: "00000000:19:00.0", SourceIndex: 1},
		{UUID: "MIG-bbbb", Parent: "GPU-aaaa2222", PCIBusID: "00000000:19:00.0", SourceIndex: 1},
	}}
	v := cuda.Vendor()
	m := func() (*visible.Mapping, error) { return &visible.Mapping{Visible: []int{1, 0}}, nil }
	for spec, want := range map[string]int{
		"GPU-aaaa1": 0, "gpu-AAAA2222": 1, "aaaa1111": 0, "0000:19:00.0": 1, "18:00.0": 0, "00000000:18:00.0": 0, "0": 1, "1": 0, "MIG-b": 2, " 1 ": 0,
	} {
		got, err := find(v, r, spec, m)
		require.NoError(t, err, spec)
		assert.Equal(t, want, got, spec)
	}
	for spec, part := range map[string]string{
		"GPU-aaaa":     "ambiguous: 2 devices",
		"GPU-cccc":     `no device has the UUID "GPU-cccc" (kit lists 3: GPU-aaaa1111, GPU-aaaa2222, MIG-bbbb)`,
		"0000:20:00.0": `no device has the PCI address "0000:20:00.0"`,
		"2":            "index 2 is out of range: 2 cuda device(s) are visible here",
		"":             "an empty device",
	} {
		_, err := find(v, r, spec, m)
		assert.ErrorIs(t, err, ErrSelection, spec)
		assert.ErrorContains(t, err, part, spec)
		assert.False(t, strings.Contains(err.Error(), "\n"), "one line")
	}
}
