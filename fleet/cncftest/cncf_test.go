package cncftest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	oci "github.com/opencontainers/runtime-spec/specs-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	cncf "tags.cncf.io/container-device-interface/pkg/cdi"
	"tags.cncf.io/container-device-interface/pkg/parser"
	specs "tags.cncf.io/container-device-interface/specs-go"

	"github.com/flagos-ai/flagshim/fleet/cdi"
	"github.com/flagos-ai/flagshim/fleet/fleettest"
)

// TestCNCFLoadsAndResolves: the specs `flagshim cdi generate` writes, YAML
// and JSON, load in the CNCF library's cache without an error, at the
// version flagshim chose (the library's own minimum for them), and each
// device resolves into an OCI spec with exactly its nodes, the spec's
// control nodes and libraries, and the visible-devices variable naming it
// by UUID.
func TestCNCFLoadsAndResolves(t *testing.T) {
	// The library stats each node without following links: real nodes
	// (mknod) where this user may make them.
	m := fleettest.NVIDIA(t, 2, fleettest.Options{Mknod: os.Geteuid() == 0})
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			dir := filepath.Join(m.Dir, "cdi-"+format)
			require.NoError(t, os.Mkdir(dir, 0o755))
			code, _, errOut := m.Run(t, nil, "cdi", "generate", "--format", format, "--output", dir)
			require.Equal(t, 0, code, errOut)
			file := filepath.Join(dir, "flagos.ai-cuda."+format)

			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			parsed, err := cncf.ParseSpec(raw)
			require.NoError(t, err, "the CNCF parser reads it (strictly: no unknown field)")
			min, err := specs.MinimumRequiredVersion(parsed)
			require.NoError(t, err)
			assert.Equal(t, min, parsed.Version, "the lowest cdiVersion that expresses the spec")
			assert.Equal(t, "0.5.0", parsed.Version, "within what podman 4.3 resolves")
			vendor, class := parser.ParseQualifier(parsed.Kind)
			assert.Equal(t, "flagos.ai", vendor)
			assert.Equal(t, "cuda", class)

			cache, err := cncf.NewCache(cncf.WithSpecDirs(dir), cncf.WithAutoRefresh(false))
			require.NoError(t, err)
			require.Empty(t, cache.GetErrors(), "the cache loads it without an error")
			want := []string{"flagos.ai/cuda=0", "flagos.ai/cuda=1", "flagos.ai/cuda=" + fleettest.UUID(0), "flagos.ai/cuda=" + fleettest.UUID(1), "flagos.ai/cuda=all"}
			got := cache.ListDevices()
			slices.Sort(want)
			slices.Sort(got)
			assert.Equal(t, want, got)

			if !m.Real {
				t.Skip("resolving devices needs real device nodes, and only root may make them (mknod)")
			}
			for _, tt := range []struct {
				device string
				gpus   []int
			}{{"0", []int{0}}, {"1", []int{1}}, {fleettest.UUID(1), []int{1}}, {"all", []int{0, 1}}} {
				o := &oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}
				unresolved, err := cache.InjectDevices(o, "flagos.ai/cuda="+tt.device)
				require.NoError(t, err, tt.device)
				require.Empty(t, unresolved)
				var nodes []string
				for _, d := range o.Linux.Devices {
					nodes = append(nodes, d.Path)
					assert.Equal(t, "c", d.Type, "%s: a character device, as the host's node is", d.Path)
				}
				wantNodes := []string{"/dev/nvidiactl", "/dev/nvidia-uvm"}
				var uuids []string
				for _, g := range tt.gpus {
					wantNodes = append(wantNodes, fmt.Sprintf("/dev/nvidia%d", g))
					uuids = append(uuids, fleettest.UUID(g))
				}
				assert.ElementsMatch(t, wantNodes, nodes, tt.device)
				assert.Contains(t, o.Process.Env, "CUDA_VISIBLE_DEVICES="+strings.Join(uuids, ","), tt.device)
				var mounts []string
				for _, mt := range o.Mounts {
					assert.Equal(t, mt.Source, mt.Destination)
					assert.Contains(t, mt.Options, "ro")
					mounts = append(mounts, filepath.Base(mt.Destination))
				}
				assert.ElementsMatch(t, []string{"libcuda.so.1", "libcuda.so." + fleettest.DriverVersion,
					"libnvidia-ptxjitcompiler.so." + fleettest.DriverVersion, "libnvidia-ml.so.1"}, mounts, tt.device)
			}
			_, err = cache.InjectDevices(&oci.Spec{Process: &oci.Process{}, Linux: &oci.Linux{}}, "flagos.ai/cuda=7")
			assert.Error(t, err, "no such device")
		})
	}
}

// TestCNCFAgreesOnVersions: for specs that need each version, flagshim's
// MinimumVersion is the CNCF library's MinimumRequiredVersion.
func TestCNCFAgreesOnVersions(t *testing.T) {
	for _, doc := range []string{
		`{"cdiVersion":"0.3.0","kind":"flagos.ai/cuda","devices":[{"name":"all","containerEdits":{"env":["A=1"]}}]}`,
		`{"cdiVersion":"0.4.0","kind":"flagos.ai/cuda","devices":[{"name":"all","containerEdits":{"mounts":[{"hostPath":"/a","containerPath":"/a","type":"bind"}]}}]}`,
		`{"cdiVersion":"0.5.0","kind":"flagos.ai/cuda","devices":[{"name":"0","containerEdits":{"env":["A=1"]}}]}`,
		`{"cdiVersion":"0.5.0","kind":"flagos.ai/cuda","devices":[{"name":"a","containerEdits":{"deviceNodes":[{"path":"/dev/a","hostPath":"/r/dev/a"}]}}]}`,
		`{"cdiVersion":"0.6.0","kind":"flagos.ai/cuda","annotations":{"a":"b"},"devices":[{"name":"a","containerEdits":{"env":["A=1"]}}]}`,
		`{"cdiVersion":"0.7.0","kind":"flagos.ai/cuda","devices":[{"name":"a","containerEdits":{"additionalGids":[5]}}]}`,
	} {
		ours, err := cdi.Parse([]byte(doc))
		require.NoError(t, err, doc)
		theirs, err := cncf.ParseSpec([]byte(doc))
		require.NoError(t, err)
		want, err := specs.MinimumRequiredVersion(theirs)
		require.NoError(t, err)
		assert.Equal(t, want, cdi.MinimumVersion(ours), doc)
	}
}

// TestCNCFReadsOurYAML: whatever flagshim's YAML writer writes, the CNCF
// parser reads to the same spec as flagshim's reader (hostile strings:
// quotes, backslashes, a '#', non-ASCII, control characters).
func TestCNCFReadsOurYAML(t *testing.T) {
	s := &cdi.Spec{Version: "0.5.0", Kind: "flagos.ai/cuda", Devices: []cdi.Device{{Name: "0", ContainerEdits: cdi.ContainerEdits{
		Env:         []string{`A="quoted" # not a comment`, "B=\\back\\slash", "C=摩尔线程\ttab", "D=\u0001ctl", "E=- dash: colon"},
		DeviceNodes: []cdi.DeviceNode{{Path: "/dev/x y", HostPath: "/root/dev/x y"}},
		Mounts:      []cdi.Mount{{HostPath: "/a: b", ContainerPath: "/a: b", Options: []string{"ro", "'q'"}}},
	}}}}
	data, err := cdi.Encode(s, cdi.YAML)
	require.NoError(t, err)
	theirs, err := cncf.ParseSpec(data)
	require.NoError(t, err, string(data))
	ours, err := cdi.Parse(data)
	require.NoError(t, err)
	assert.Equal(t, s, ours)
	assert.Equal(t, s.Devices[0].ContainerEdits.Env, theirs.Devices[0].ContainerEdits.Env)
	assert.Equal(t, "/dev/x y", theirs.Devices[0].ContainerEdits.DeviceNodes[0].Path)
	assert.Equal(t, "/a: b", theirs.Devices[0].ContainerEdits.Mounts[0].HostPath)
	assert.Equal(t, []string{"ro", "'q'"}, theirs.Devices[0].ContainerEdits.Mounts[0].Options)
}
