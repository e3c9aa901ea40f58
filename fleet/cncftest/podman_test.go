package cncftest

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/fleet/fleettest"
)

// The container runtime test: podman with runc (Debian's packages) runs a
// container given devices of the spec `flagshim cdi generate` wrote for a
// fake machine (device nodes made by mknod under FLAGOS_TEST_ROOT, fake
// libcuda and NVML), and flagshim inside it, in the presence tier, sees
// exactly the devices given: their count, their UUIDs, their nodes and the
// visible-devices variable. .ci/run installs podman, runc and
// busybox-static where they are missing.

// podmanEnv is a podman of this test's own: its storage, run folder and
// containers.conf under dir. These machines need default_ulimits = [] and
// the cgroupfs manager, and runc (crun refuses their hybrid cgroup
// layout).
type podmanEnv struct {
	dir     string
	runroot string // short: podman refuses one longer than 50 characters
	conf    string
}

func (p *podmanEnv) cmd(args ...string) *exec.Cmd {
	base := []string{"--root", filepath.Join(p.dir, "storage"), "--runroot", p.runroot, "--storage-driver", "vfs"}
	c := exec.Command("podman", append(base, args...)...)
	c.Env = append(fleettest.Scrubbed(), "CONTAINERS_CONF="+p.conf)
	return c
}

func (p *podmanEnv) run(t *testing.T, args ...string) string {
	t.Helper()
	c := p.cmd(args...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

// needPodman skips t, saying why, where the runtime cannot run here.
func needPodman(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the container test runs rootful podman and makes device nodes: it needs root")
	}
	for _, tool := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs it: apt-get install podman runc busybox-static)", tool)
		}
	}
	if !staticELF("/bin/busybox") {
		t.Skip("/bin/busybox is not a static busybox (apt-get install busybox-static)")
	}
}

// staticELF says whether p is an executable with no program interpreter.
func staticELF(p string) bool {
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// sharedDeps are the files the dynamic loader maps for each of files (the
// C library, its loader), as ldd resolves them here.
func sharedDeps(t *testing.T, files ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	re := regexp.MustCompile(`(/\S+) \(0x`)
	for _, f := range files {
		b, err := exec.Command("ldd", f).CombinedOutput()
		require.NoError(t, err, "ldd %s: %s", f, b)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !seen[m[1]] {
				seen[m[1]] = true
				out = append(out, m[1])
			}
		}
	}
	return out
}

// image imports a root filesystem of busybox, flagshim and the C library
// it and the fakes load, and returns its name.
func image(t *testing.T, p *podmanEnv, m *fleettest.Machine) string {
	t.Helper()
	rootfs := filepath.Join(p.dir, "rootfs")
	copyTo := func(src, dst string) {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o755))
	}
	copyTo("/bin/busybox", filepath.Join(rootfs, "bin/busybox"))
	for _, applet := range []string{"sh", "env", "ls", "cat"} {
		require.NoError(t, os.Symlink("busybox", filepath.Join(rootfs, "bin", applet)))
	}
	copyTo(m.Binary, filepath.Join(rootfs, "usr/local/bin/flagshim"))
	libs, _ := filepath.Glob(filepath.Join(m.Lib, "*.so*"))
	for _, dep := range sharedDeps(t, append([]string{m.Binary}, libs...)...) {
		real, err := filepath.EvalSymlinks(dep)
		require.NoError(t, err)
		copyTo(real, filepath.Join(rootfs, dep))
	}
	for _, d := range []string{"dev", "proc", "sys", "tmp", "etc"} {
		require.NoError(t, os.MkdirAll(filepath.Join(rootfs, d), 0o755))
	}
	tarball := filepath.Join(p.dir, "rootfs.tar")
	b, err := exec.Command("tar", "-C", rootfs, "-cf", tarball, ".").CombinedOutput()
	require.NoError(t, err, "tar: %s", b)
	name := "localhost/flagshim-cdi-test:latest"
	p.run(t, "import", tarball, name)
	return name
}

func TestPodmanRunsGeneratedSpec(t *testing.T) {
	needPodman(t)
	m := fleettest.NVIDIA(t, 2, fleettest.Options{Mknod: true})
	p := &podmanEnv{dir: filepath.Join(m.Dir, "podman"), conf: filepath.Join(m.Dir, "containers.conf")}
	require.NoError(t, os.MkdirAll(p.dir, 0o755))
	runroot, err := os.MkdirTemp("", "fleet-run-")
	require.NoError(t, err)
	p.runroot = runroot
	require.NoError(t, os.WriteFile(p.conf, []byte("[containers]\ndefault_ulimits = []\n\n[engine]\ncgroup_manager = \"cgroupfs\"\n"), 0o644))
	t.Cleanup(func() {
		c := p.cmd("system", "reset", "--force")
		_ = c.Run()
		_ = os.RemoveAll(p.dir) // vfs layers may hold read-only folders
		_ = os.RemoveAll(p.runroot)
	})

	// The spec goes where podman 4.3 reads specs: /var/run/cdi (it has no
	// setting for other folders), under a name of this test's own.
	specDir := "/var/run/cdi"
	require.NoError(t, os.MkdirAll(specDir, 0o755))
	spec := filepath.Join(specDir, fmt.Sprintf("flagos.ai-cuda-test-%d.yaml", os.Getpid()))
	code, _, errOut := m.Run(t, nil, "cdi", "generate", "--output", spec)
	require.Equal(t, 0, code, errOut)
	t.Cleanup(func() { os.Remove(spec) })

	img := image(t, p, m)
	inside := func(t *testing.T, device string) string {
		t.Helper()
		args := []string{"run", "--rm", "--runtime", "runc", "--network", "none", "--device", "flagos.ai/cuda=" + device}
		for _, kv := range m.Env {
			if !strings.HasPrefix(kv, "FLAGOS_TEST_ROOT=") { // inside, /dev is the container's
				args = append(args, "-e", kv)
			}
		}
		args = append(args, "-e", "FLAGOS_PROBE=presence", img, "/bin/sh", "-c",
			"echo VAR=$CUDA_VISIBLE_DEVICES; ls /dev; /usr/local/bin/flagshim list --accelerators-only")
		return p.run(t, args...)
	}
	for _, tt := range []struct {
		device string
		gpus   []int
	}{{"1", []int{1}}, {fleettest.UUID(0), []int{0}}, {"all", []int{0, 1}}} {
		t.Run(tt.device, func(t *testing.T) {
			out := inside(t, tt.device)
			t.Logf("inside the container:\n%s", out)
			var uuids []string
			for _, g := range tt.gpus {
				uuids = append(uuids, fleettest.UUID(g))
			}
			lines := strings.Split(out, "\n")
			assert.Contains(t, lines, "VAR="+strings.Join(uuids, ","), "the visible-devices variable names the devices given:\n%s", out)
			var listed []string
			for _, l := range lines {
				if strings.HasPrefix(l, "cuda:") {
					listed = append(listed, l)
				}
			}
			require.Len(t, listed, len(tt.gpus), "flagshim sees exactly the devices given:\n%s", out)
			for i, g := range tt.gpus {
				assert.Contains(t, listed[i], fmt.Sprintf("cuda:%d:", i))
				assert.Contains(t, listed[i], "(UUID: "+fleettest.UUID(g)+")")
			}
			for g := 0; g < 2; g++ {
				node := fmt.Sprintf("nvidia%d", g)
				if contains(tt.gpus, g) {
					assert.Contains(t, lines, node, "its node is there")
				} else {
					assert.NotContains(t, lines, node, "another device's node is not")
				}
			}
			assert.Contains(t, lines, "nvidiactl")
			assert.Contains(t, lines, "nvidia-uvm")
		})
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
