package cdi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/fleet/cdi"
	"github.com/flagos-ai/flagshim/fleet/fleettest"
)

// The CLI on a fake machine of two GPUs: `flagshim cdi generate` and `cdi
// check`, through the binary (the loader runs in a process of its own).

func generate(t *testing.T, m *fleettest.Machine, args ...string) *cdi.Spec {
	t.Helper()
	code, out, errOut := m.Run(t, nil, append([]string{"cdi", "generate"}, args...)...)
	require.Equal(t, 0, code, "stderr: %s", errOut)
	spec, err := cdi.Parse([]byte(out))
	require.NoError(t, err, out)
	return spec
}

func TestGenerateCLI(t *testing.T) {
	m := fleettest.NVIDIA(t, 2, fleettest.Options{})
	spec := generate(t, m)
	assert.Equal(t, "flagos.ai/cuda", spec.Kind)
	assert.Equal(t, cdi.Text("0.5.0"), spec.Version, "device names that start with a digit and hostPaths need 0.5.0, no more")

	names := map[cdi.Text]cdi.ContainerEdits{}
	for _, d := range spec.Devices {
		names[d.Name] = d.ContainerEdits
	}
	require.Len(t, names, 5, "0, 1, both UUIDs and all")
	for i := 0; i < 2; i++ {
		for _, name := range []string{string(rune('0' + i)), fleettest.UUID(i)} {
			e, ok := names[cdi.Text(name)]
			require.True(t, ok, name)
			node := "/dev/nvidia" + string(rune('0'+i))
			assert.Equal(t, []cdi.DeviceNode{{Path: node, HostPath: filepath.Join(m.Root, node)}}, e.DeviceNodes, name)
			assert.Equal(t, []string{"CUDA_VISIBLE_DEVICES=" + fleettest.UUID(i)}, e.Env, "%s: the variable names the device by UUID", name)
		}
	}
	all := names["all"]
	assert.Len(t, all.DeviceNodes, 2)
	assert.Equal(t, []string{"CUDA_VISIBLE_DEVICES=" + fleettest.UUID(0) + "," + fleettest.UUID(1)}, all.Env)

	var control []string
	for _, n := range spec.ContainerEdits.DeviceNodes {
		control = append(control, n.Path)
	}
	assert.Equal(t, []string{"/dev/nvidiactl", "/dev/nvidia-uvm"}, control, "the control nodes that are there, none that are not")

	var mounts []string
	for _, mt := range spec.ContainerEdits.Mounts {
		assert.Equal(t, mt.HostPath, mt.ContainerPath, "at the same path")
		assert.Contains(t, mt.Options, "ro")
		mounts = append(mounts, strings.TrimPrefix(mt.HostPath, m.Lib+"/"))
	}
	assert.Equal(t, []string{"libcuda.so.1", "libcuda.so." + fleettest.DriverVersion, "libnvidia-ptxjitcompiler.so." + fleettest.DriverVersion, "libnvidia-ml.so.1"}, mounts,
		"the driver library's soname link and real file, its companion of the same version, NVML")
}

func TestGenerateOutput(t *testing.T) {
	m := fleettest.NVIDIA(t, 1, fleettest.Options{})
	out := filepath.Join(m.Dir, "spec.json")
	code, stdout, errOut := m.Run(t, nil, "cdi", "generate", "--output", out)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, stdout)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, cdi.JSON, cdi.FormatOf(data), "a .json output is JSON")
	_, err = cdi.Parse(data)
	require.NoError(t, err)

	dir := filepath.Join(m.Dir, "cdi")
	require.NoError(t, os.Mkdir(dir, 0o755))
	code, _, errOut = m.Run(t, nil, "cdi", "generate", "--output", dir)
	require.Equal(t, 0, code, errOut)
	data, err = os.ReadFile(filepath.Join(dir, "flagos.ai-cuda.yaml"))
	require.NoError(t, err, "a folder gets one file per spec, named vendor-class")
	assert.Equal(t, cdi.YAML, cdi.FormatOf(data))
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 1, "no temporary file is left behind")

	code, stdout, _ = m.Run(t, nil, "cdi", "generate", "--format", "json")
	require.Equal(t, 0, code)
	assert.Equal(t, cdi.JSON, cdi.FormatOf([]byte(stdout)))
}

// TestGenerateBadOutput: an output that cannot be written is one line and
// exit 1, and the file there is left as it was.
func TestGenerateBadOutput(t *testing.T) {
	m := fleettest.NVIDIA(t, 1, fleettest.Options{})
	ro := filepath.Join(m.Dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o755))
	old := filepath.Join(ro, "spec.yaml")
	require.NoError(t, os.WriteFile(old, []byte("old"), 0o644))
	require.NoError(t, os.Chmod(ro, 0o555))
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	if f, err := os.Create(filepath.Join(ro, "probe")); err == nil { // root writes anyway
		f.Close()
		os.Remove(f.Name())
		t.Skip("this user writes into a read-only folder (root): an unwritable output cannot be made here")
	}
	code, stdout, errOut := m.Run(t, nil, "cdi", "generate", "--output", old)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "cannot write "+old)
	data, _ := os.ReadFile(old)
	assert.Equal(t, "old", string(data))
}

func TestGenerateNoDevice(t *testing.T) {
	m := fleettest.NVIDIA(t, 1, fleettest.Options{})
	code, stdout, errOut := m.Run(t, []string{"FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1"}, "cdi", "generate")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Contains(t, errOut, "no vendor's devices are here")

	// --all: a spec for every registered vendor that has something to
	// inject; cuda's names no device, and sets CUDA_VISIBLE_DEVICES empty.
	code, stdout, errOut = m.Run(t, []string{"FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1"}, "cdi", "generate", "--all")
	require.Equal(t, 0, code, errOut)
	docs := strings.Split(stdout, "---\n")
	var cuda *cdi.Spec
	for _, d := range docs {
		s, err := cdi.Parse([]byte(d))
		require.NoError(t, err, d)
		if s.Kind == "flagos.ai/cuda" {
			cuda = s
		}
	}
	require.NotNil(t, cuda, stdout)
	require.Len(t, cuda.Devices, 1)
	assert.Equal(t, cdi.Text("all"), cuda.Devices[0].Name)
	assert.Equal(t, []string{"CUDA_VISIBLE_DEVICES="}, cuda.Devices[0].ContainerEdits.Env)
}

func TestCheckCLI(t *testing.T) {
	m := fleettest.NVIDIA(t, 2, fleettest.Options{})
	file := filepath.Join(m.Dir, "flagos.ai-cuda.yaml")
	code, _, errOut := m.Run(t, nil, "cdi", "generate", "--output", file)
	require.Equal(t, 0, code, errOut)

	code, stdout, errOut := m.Run(t, nil, "cdi", "check", file)
	assert.Equal(t, 0, code, "current: %s%s", stdout, errOut)
	assert.Empty(t, stdout)

	// A refresh of a current spec does not touch it.
	before, err := os.Stat(file)
	require.NoError(t, err)
	code, stdout, _ = m.Run(t, nil, "cdi", "check", "--refresh", file)
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout)
	after, err := os.Stat(file)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after) && before.ModTime().Equal(after.ModTime()), "not rewritten")

	// The machine changes: a new driver version, nvidia-uvm-tools appears,
	// a third GPU.
	real := filepath.Join(m.Lib, "libcuda.so."+fleettest.DriverVersion)
	newReal := filepath.Join(m.Lib, "libcuda.so.550.60.01")
	require.NoError(t, os.Rename(real, newReal))
	link := filepath.Join(m.Lib, "libcuda.so.1")
	require.NoError(t, os.Remove(link))
	require.NoError(t, os.Symlink(filepath.Base(newReal), link))
	m.AddNode(t, "nvidia-uvm-tools")
	m.AddNode(t, "nvidia2")
	info := filepath.Join(m.Root, "proc/driver/nvidia/gpus", fleettest.BusID(2), "information")
	require.NoError(t, os.MkdirAll(filepath.Dir(info), 0o755))
	require.NoError(t, os.WriteFile(info, []byte("GPU UUID: "+fleettest.UUID(2)+"\nBus Location: "+fleettest.BusID(2)+"\nDevice Minor: 2\n"), 0o644))
	three := []string{"FAKE_NVML_COUNT=3"}

	code, stdout, errOut = m.Run(t, three, "cdi", "check", file)
	assert.Equal(t, 3, code, errOut)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	for _, want := range []string{
		"device count: 2 in the spec, 3 now",
		"device node /dev/nvidia-uvm-tools (from " + m.Root + "/dev/nvidia-uvm-tools): new, not in the spec",
		"library libcuda: " + real + " in the spec, " + newReal + " now",
		"mount " + filepath.Join(m.Lib, "libnvidia-ptxjitcompiler.so."+fleettest.DriverVersion) + ": in the spec, gone now",
		"device 2: new, not in the spec",
		"device " + fleettest.UUID(2) + " (by UUID): new, not in the spec",
	} {
		assert.Contains(t, lines, file+": "+want)
	}
	unchanged, _ := os.ReadFile(file)

	code, stdout, errOut = m.Run(t, three, "cdi", "check", "--refresh", file)
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, stdout, file+": refreshed")
	refreshed, _ := os.ReadFile(file)
	assert.NotEqual(t, string(unchanged), string(refreshed))
	code, stdout, _ = m.Run(t, three, "cdi", "check", file)
	assert.Equal(t, 0, code, "current after the refresh: %s", stdout)

	// A GPU gone: its names are gone.
	code, stdout, _ = m.Run(t, []string{"FAKE_NVML_COUNT=2"}, "cdi", "check", file)
	assert.Equal(t, 3, code)
	assert.Contains(t, stdout, file+": device 2: in the spec, gone now")
}

// TestCheckBadInput: a file that is not CDI, a kind that does not parse or
// that names no known type, a device name CDI forbids, a file that is not
// there: one line, exit 1, the file untouched.
func TestCheckBadInput(t *testing.T) {
	m := fleettest.NVIDIA(t, 1, fleettest.Options{})
	good := "cdiVersion: \"0.5.0\"\nkind: flagos.ai/cuda\ndevices:\n  - name: \"0\"\n    containerEdits:\n      env: [\"A=1\"]\n"
	for _, tt := range []struct{ name, content, want string }{
		{"not yaml", "\x00\x01 not a spec {", "not a CDI spec"},
		{"not cdi", "hello: world\n", "not a CDI spec"},
		{"json not cdi", `{"kind": 3}`, "not a CDI spec"},
		{"kind", strings.Replace(good, "flagos.ai/cuda", "flagos.ai cuda", 1), "not <vendor>/<class>"},
		{"other vendor", strings.Replace(good, "flagos.ai/cuda", "nvidia.com/gpu", 1), "not a kind flagshim writes"},
		{"unknown type", strings.Replace(good, "flagos.ai/cuda", "flagos.ai/warpdrive", 1), "no registered vendor has"},
		{"device name", strings.Replace(good, `name: "0"`, `name: "my gpu"`, 1), "bad device name"},
		{"version", strings.Replace(good, `"0.5.0"`, `"0.3.0"`, 1), "lower than the 0.5.0 its content needs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(m.Dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			require.NoError(t, os.WriteFile(file, []byte(tt.content), 0o644))
			code, stdout, errOut := m.Run(t, nil, "cdi", "check", "--refresh", file)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tt.want)
			data, _ := os.ReadFile(file)
			assert.Equal(t, tt.content, string(data), "left as it was")
		})
	}
	code, _, errOut := m.Run(t, nil, "cdi", "check", filepath.Join(m.Dir, "missing.yaml"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "no such file")

	code, _, errOut = m.Run(t, nil, "cdi", "frobnicate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `unknown subcommand "frobnicate"`)
}
