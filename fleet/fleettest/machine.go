// Package fleettest makes a fake NVIDIA machine for the tests of the fleet
// packages (CDI specs, labels) and of the container runtime: fake libcuda
// and NVML libraries (the driver library as a real file with its soname
// link, and a companion library of the same version beside it), device
// nodes, and the kernel driver's /proc information files under a test
// root, and the flagshim binary that reads them. Tests only.
package fleettest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/vendors"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
)

// DriverVersion is the fake driver's version: libcuda.so.<DriverVersion>.
const DriverVersion = "550.54.15"

// Machine is a fake NVIDIA machine.
type Machine struct {
	Dir  string // everything is under it
	Lib  string // the libraries' folder
	Root string // FLAGOS_TEST_ROOT: dev/, proc/driver/nvidia/gpus/
	GPUs int
	// Env are the variables that make flagshim see this machine (the
	// library overrides, the root, the fake NVML's device count); every
	// other vendor's library is pointed at nothing.
	Env []string
	// Binary is the flagshim CLI, built once per content.
	Binary string
	// Real says the device nodes are character devices made by mknod
	// (1:3, the null device's numbers), not symlinks to /dev/null.
	Real bool
}

// UUID is the fake NVML's UUID of GPU i.
func UUID(i int) string { return fmt.Sprintf("GPU-%08x-1111-2222-3333-444444444444", i) }

// BusID is the fake NVML's PCI bus id of GPU i, in sysfs's form.
func BusID(i int) string { return fmt.Sprintf("0000:%02x:00.0", 0x18+i) }

// Options of NVIDIA.
type Options struct {
	// Mknod makes the device nodes real character devices (root only; the
	// test is skipped otherwise): a container runtime copies a node's
	// numbers, which a symlink does not have.
	Mknod bool
	// NoBinary skips building the flagshim binary.
	NoBinary bool
}

// NVIDIA makes a machine of gpus GPUs: /dev/nvidia<i> with minor i,
// nvidiactl and nvidia-uvm (not nvidia-uvm-tools nor nvidia-modeset), each
// GPU's /proc/driver/nvidia/gpus/<bus>/information, libcuda.so.1 ->
// libcuda.so.<DriverVersion>, libnvidia-ptxjitcompiler.so.<DriverVersion>
// and libnvidia-ml.so.1. It skips t where no C compiler builds the fakes.
func NVIDIA(t testing.TB, gpus int, o Options) *Machine {
	t.Helper()
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake libcuda and NVML")
	}
	if o.Mknod && os.Geteuid() != 0 {
		t.Skip("making device nodes (mknod) needs root")
	}
	dir := dltest.PrivateDir(t)
	m := &Machine{Dir: dir, Lib: filepath.Join(dir, "lib"), Root: filepath.Join(dir, "root"), GPUs: gpus, Real: o.Mknod}
	must(t, os.MkdirAll(m.Lib, 0o755))
	cudaVendor, _ := vendors.Lookup(device.CUDA)
	cuda := vendorstest.Driver(t, cudaVendor, m.Lib)
	real := filepath.Join(m.Lib, "libcuda.so."+DriverVersion)
	must(t, os.Rename(cuda, real))
	must(t, os.Symlink(filepath.Base(real), cuda))
	nvml := vendorstest.Management(t, "nvml", m.Lib)
	data, err := os.ReadFile(nvml)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(m.Lib, "libnvidia-ptxjitcompiler.so."+DriverVersion), data, 0o755))

	nodes := []string{"nvidiactl", "nvidia-uvm"}
	for i := 0; i < gpus; i++ {
		nodes = append(nodes, fmt.Sprintf("nvidia%d", i))
		info := fmt.Sprintf("Model:           Fake NVIDIA GPU %d\nIRQ:             1\nGPU UUID:        %s\nBus Type:        PCIe\nBus Location:    %s\nDevice Minor:    %d\nGPU Excluded:    No\n",
			i, UUID(i), BusID(i), i)
		p := filepath.Join(m.Root, "proc/driver/nvidia/gpus", BusID(i), "information")
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(info), 0o444))
	}
	for _, n := range nodes {
		m.AddNode(t, n)
	}
	m.Env = []string{"FLAGOS_LIBCUDA_PATH=" + cuda, "FLAGOS_LIBNVML_PATH=" + nvml, "FLAGOS_TEST_ROOT=" + m.Root,
		fmt.Sprintf("FAKE_NVML_COUNT=%d", gpus), "FAKE_NVML_DRIVER=" + DriverVersion}
	for _, v := range vendors.All() {
		for _, x := range v.Variables() {
			if x.Kind == driver.VarLibraryPath && x.Name != "FLAGOS_LIBCUDA_PATH" && x.Name != "FLAGOS_LIBNVML_PATH" {
				m.Env = append(m.Env, x.Name+"=/nonexistent/"+strings.ToLower(x.Name))
			}
		}
	}
	if !o.NoBinary {
		m.Binary = dltest.GoBuild(t, "github.com/flagos-ai/flagshim/cmd/flagshim", "flagshim")
	}
	return m
}

// AddNode makes /dev/name under the root a character device.
func (m *Machine) AddNode(t testing.TB, name string) {
	t.Helper()
	p := filepath.Join(m.Root, "dev", name)
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	if m.Real {
		must(t, unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
		return
	}
	must(t, os.Symlink("/dev/null", p))
}

// Run runs the flagshim binary with args in the machine's environment and
// env, in a scrubbed copy of the test's (no FLAGOS_, FAKE_ or visible-devices
// variable of the developer's): its exit status and outputs.
func (m *Machine) Run(t testing.TB, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(m.Binary, args...)
	cmd.Env = append(append(Scrubbed(), m.Env...), env...)
	cmd.Dir = m.Dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v", m.Binary, args, err)
	}
	return code, out.String(), errOut.String()
}

// Scrubbed is the test's environment without the variables that would
// change what flagshim sees.
func Scrubbed() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "FLAGOS_") || strings.HasPrefix(kv, "FAKE_") || strings.HasPrefix(kv, "LD_LIBRARY_PATH=") ||
			strings.Contains(strings.SplitN(kv, "=", 2)[0], "VISIBLE_DEVICES") || strings.HasPrefix(kv, dltest.ChildEnv+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
