package cdi

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func sample() *Spec {
	return &Spec{
		Kind: "flagos.ai/cuda",
		Devices: []Device{
			{Name: "0", ContainerEdits: ContainerEdits{Env: []string{"CUDA_VISIBLE_DEVICES=GPU-a"}, DeviceNodes: []DeviceNode{{Path: "/dev/nvidia0"}}}},
			{Name: "GPU-a", ContainerEdits: ContainerEdits{Env: []string{"CUDA_VISIBLE_DEVICES=GPU-a"}, DeviceNodes: []DeviceNode{{Path: "/dev/nvidia0"}}}},
			{Name: "all", ContainerEdits: ContainerEdits{Env: []string{"CUDA_VISIBLE_DEVICES=GPU-a"}, DeviceNodes: []DeviceNode{{Path: "/dev/nvidia0"}}}},
		},
		ContainerEdits: ContainerEdits{
			DeviceNodes: []DeviceNode{{Path: "/dev/nvidiactl"}},
			Mounts: []Mount{{HostPath: "/usr/lib/libcuda.so.1", ContainerPath: "/usr/lib/libcuda.so.1", Options: []string{"ro", "nosuid"}},
				{HostPath: "/usr/lib/libcuda.so.580.95.05", ContainerPath: "/usr/lib/libcuda.so.580.95.05", Options: []string{"ro"}}},
		},
	}
}

func TestMinimumVersion(t *testing.T) {
	s := &Spec{Kind: "flagos.ai/cuda", Devices: []Device{{Name: "all"}}}
	assert.Equal(t, "0.3.0", MinimumVersion(s))
	s.ContainerEdits.Mounts = []Mount{{HostPath: "/a", ContainerPath: "/a", Type: "bind"}}
	assert.Equal(t, "0.4.0", MinimumVersion(s), "a mount's type")
	s.ContainerEdits.Mounts = nil
	s.Devices[0].ContainerEdits.DeviceNodes = []DeviceNode{{Path: "/dev/x", HostPath: "/root/dev/x"}}
	assert.Equal(t, "0.5.0", MinimumVersion(s), "a hostPath")
	s.Devices[0].ContainerEdits.DeviceNodes = nil
	s.Devices = append(s.Devices, Device{Name: "0"})
	assert.Equal(t, "0.5.0", MinimumVersion(s), "a name that starts with a digit")
	s.Annotations = json.RawMessage(`{"a":"b"}`)
	assert.Equal(t, "0.6.0", MinimumVersion(s))
	s.ContainerEdits.NetDevices = json.RawMessage(`[{"hostInterfaceName":"a","name":"b"}]`)
	assert.Equal(t, "1.1.0", MinimumVersion(s))
}

func TestTypeOf(t *testing.T) {
	got, err := TypeOf("flagos.ai/cuda")
	require.NoError(t, err)
	assert.Equal(t, "cuda", got)
	for _, k := range []string{"cuda", "nvidia.com/gpu", "flagos.ai/", "flagos.ai/-x", "flagos.ai/a b"} {
		_, err := TypeOf(k)
		assert.Error(t, err, k)
	}
	_, err = TypeOf("nvidia.com/gpu")
	assert.ErrorIs(t, err, ErrBadKind)
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"0", "all", "GPU-8a1f-00", "MIG-1:2.3", "a_b"} {
		assert.NoError(t, validName(ok, true), ok)
	}
	for _, bad := range []string{"", "-a", "a-", "a b", "ä", "a/b", "a=b"} {
		assert.Error(t, validName(bad, true), bad)
	}
	assert.Error(t, validName("0abc", false), "a class starts with a letter")
}

func TestRoundTrip(t *testing.T) {
	s := sample()
	s.Version = Text(MinimumVersion(s))
	for _, f := range []Format{YAML, JSON} {
		data, err := Encode(s, f)
		require.NoError(t, err)
		assert.Equal(t, f, FormatOf(data))
		got, err := Parse(data)
		require.NoError(t, err, string(data))
		assert.Equal(t, s, got, f)
	}
}

// TestParseYAML reads what people and other tools write: comments, plain
// and single-quoted scalars, a list at its key's indent, flow lists, a
// document marker, numbers where strings are meant.
func TestParseYAML(t *testing.T) {
	doc := `---
# a spec written by hand
cdiVersion: 0.5.0   # plain
kind: 'flagos.ai/cuda'
devices:
- name: 0
  containerEdits:
    env: ["CUDA_VISIBLE_DEVICES=GPU-a", 'B=it''s']
    deviceNodes:
    - path: /dev/nvidia0
      major: 195
containerEdits:
  mounts:
    - hostPath: "/a # not a comment"
      containerPath: /a
      options: [ro, nosuid]
`
	s, err := Parse([]byte(doc))
	require.NoError(t, err)
	assert.Equal(t, Text("0.5.0"), s.Version)
	assert.Equal(t, "flagos.ai/cuda", s.Kind)
	require.Len(t, s.Devices, 1)
	assert.Equal(t, Text("0"), s.Devices[0].Name)
	assert.Equal(t, []string{"CUDA_VISIBLE_DEVICES=GPU-a", "B=it's"}, s.Devices[0].ContainerEdits.Env)
	assert.Equal(t, []DeviceNode{{Path: "/dev/nvidia0", Major: 195}}, s.Devices[0].ContainerEdits.DeviceNodes)
	assert.Equal(t, []Mount{{HostPath: "/a # not a comment", ContainerPath: "/a", Options: []string{"ro", "nosuid"}}}, s.ContainerEdits.Mounts)
}

func TestParseBad(t *testing.T) {
	good := "cdiVersion: \"0.5.0\"\nkind: flagos.ai/cuda\ndevices:\n  - name: \"0\"\n    containerEdits:\n      env: [\"A=1\"]\n"
	_, err := Parse([]byte(good))
	require.NoError(t, err)
	for _, tt := range []struct {
		name, doc string
		want      error
	}{
		{"empty", "", ErrNotCDI},
		{"a list", "- a\n- b\n", ErrNotCDI},
		{"unknown field", good + "extra: 1\n", ErrNotCDI},
		{"no devices", "cdiVersion: \"0.3.0\"\nkind: flagos.ai/cuda\ndevices: []\n", ErrNotCDI},
		{"no kind", strings.Replace(good, "kind: flagos.ai/cuda\n", "", 1), ErrNotCDI},
		{"bad kind", strings.Replace(good, "flagos.ai/cuda", "flagos.ai", 1), ErrBadKind},
		{"bad version", strings.Replace(good, `"0.5.0"`, `"9.9.9"`, 1), ErrNotCDI},
		{"version too low", strings.Replace(good, `"0.5.0"`, `"0.4.0"`, 1), ErrNotCDI},
		{"device name", strings.Replace(good, `name: "0"`, `name: "a b"`, 1), ErrBadDevice},
		{"device twice", good + "  - name: \"0\"\n    containerEdits:\n      env: [\"A=1\"]\n", ErrBadDevice},
		{"key twice", good + "kind: x/y\n", ErrNotCDI},
		{"anchor", good + "containerEdits: &a {}\n", ErrNotCDI},
		{"block scalar", good + "containerEdits: |\n  x\n", ErrNotCDI},
		{"two documents", good + "---\n" + good, ErrNotCDI},
		{"tab", "cdiVersion: \"0.5.0\"\n\tkind: x\n", ErrNotCDI},
		{"bad indent", "cdiVersion: \"0.5.0\"\n   kind: x\n", ErrNotCDI},
		{"unterminated", "cdiVersion: \"0.5.0\n", ErrNotCDI},
		{"json trailing", `{"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x","containerEdits":{"env":["A=1"]}}]} {}`, ErrNotCDI},
		{"too big", strings.Repeat("#", MaxSize+1), ErrNotCDI},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.doc))
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

func TestDiff(t *testing.T) {
	old := sample()
	old.Version = "0.5.0"
	assert.Empty(t, Diff(old, sample2(old)))

	now := sample2(old)
	now.ContainerEdits.Mounts[1].HostPath = "/usr/lib/libcuda.so.580.105.08"
	now.ContainerEdits.Mounts[1].ContainerPath = now.ContainerEdits.Mounts[1].HostPath
	now.ContainerEdits.DeviceNodes = append(now.ContainerEdits.DeviceNodes, DeviceNode{Path: "/dev/nvidia-uvm"})
	now.Devices[1].Name = "GPU-b"
	now.Devices[2].ContainerEdits.Env = []string{"CUDA_VISIBLE_DEVICES=GPU-b"}
	now.Devices = append(now.Devices, Device{Name: "1"})
	assert.Equal(t, []string{
		"device count: 1 in the spec, 2 now",
		"device node /dev/nvidia-uvm: new, not in the spec",
		"library libcuda: /usr/lib/libcuda.so.580.95.05 in the spec, /usr/lib/libcuda.so.580.105.08 now",
		"device GPU-a (by UUID): in the spec, gone now",
		`device all: CUDA_VISIBLE_DEVICES: "GPU-a" in the spec, "GPU-b" now`,
		"device GPU-b (by UUID): new, not in the spec",
		"device 1: new, not in the spec",
	}, Diff(old, now))
}

// sample2 is a deep copy of s, through JSON.
func sample2(s *Spec) *Spec {
	b, _ := json.Marshal(s)
	var out Spec
	_ = json.Unmarshal(b, &out)
	return &out
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "spec.yaml")
	require.NoError(t, WriteFile(p, []byte("one")))
	require.NoError(t, WriteFile(p, []byte("two")))
	data, _ := os.ReadFile(p)
	assert.Equal(t, "two", string(data))
	st, _ := os.Stat(p)
	assert.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	ents, _ := os.ReadDir(dir)
	assert.Len(t, ents, 1, "no temporary file left")

	err := WriteFile(filepath.Join(dir, "nofolder", "spec.yaml"), []byte("x"))
	assert.Error(t, err)
	err = WriteFile(dir, []byte("x"))
	assert.ErrorContains(t, err, "is a folder")
	// A file standing where a folder should be: no write, for root too.
	err = WriteFile(filepath.Join(p, "spec.yaml"), []byte("x"))
	assert.Error(t, err)
	data, _ = os.ReadFile(p)
	assert.Equal(t, "two", string(data), "left as it was")
	assert.False(t, errors.Is(err, ErrNotCDI))
}

// FuzzParse: no input makes Parse panic; what it accepts is valid, and
// survives being written (YAML and JSON) and read again unchanged.
func FuzzParse(f *testing.F) {
	s := sample()
	s.Version = "0.5.0"
	for _, format := range []Format{YAML, JSON} {
		data, _ := Encode(s, format)
		f.Add(data)
	}
	f.Add([]byte("cdiVersion: 0.3.0\nkind: a/b\ndevices:\n- name: x\n  containerEdits:\n    env: [A=1, 'B=2']\n"))
	f.Add([]byte("a:\n- - b\n  - c\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			return
		}
		require.NoError(t, s.validate())
		for _, format := range []Format{YAML, JSON} {
			out, err := Encode(s, format)
			require.NoError(t, err)
			again, err := Parse(out)
			require.NoError(t, err, "%s of an accepted spec:\n%s", format, out)
			assert.Equal(t, s, again)
		}
	})
}
