package cuda

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// container is what a container needs to use NVIDIA GPUs (CDI specs).
// Sources: NVIDIA/nvidia-container-toolkit, the generator NVIDIA maintains
// (`nvidia-ctk cdi generate`):
//   - the control nodes, pkg/system/nvdevices/devices.go: "nvidiactl",
//     "nvidia-modeset", "nvidia-uvm", "nvidia-uvm-tools" (each injected
//     where it exists: nvidia-modeset and the UVM nodes appear only once
//     their kernel modules are loaded);
//   - each GPU's node /dev/nvidia<minor>, the minor from the GPU's
//     /proc/driver/nvidia/gpus/<bus>/information ("GPU UUID:", "Bus
//     Location:", "Device Minor:"; internal/info/proc/information_files.go);
//   - the driver's other libraries, pkg/nvcdi/driver-nvml.go
//     getVersionLibs: every "*.so.<driver version>" beside libcuda;
//   - NVML (libnvidia-ml.so.1), which nvidia-smi and the presence tier
//     read.
//
// CUDA_VISIBLE_DEVICES takes UUIDs ("GPU-8a1f..."; the CUDA C++
// Programming Guide, "CUDA Environment Variables").
var container = driver.Container{
	Control:    []string{"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset"},
	Nodes:      gpuNodes,
	Libraries:  []clib.Library{nvmlLibrary},
	Companions: sameVersion,
	VisibleEnv: VisibleDevicesEnv,
}

// procGPUs are the GPUs' information files the kernel driver writes.
const procGPUs = "/proc/driver/nvidia/gpus"

// gpuNodes is /dev/nvidia<minor> of each GPU: its information file is the
// one whose UUID is the GPU's, else whose bus location is the GPU's. The
// files are read once for every GPU.
func gpuNodes(e *presence.Env, devs []driver.DeviceRef) ([][]string, []error) {
	nodes, errs := make([][]string, len(devs)), make([]error, len(devs))
	files, _ := filepath.Glob(e.Path(procGPUs) + "/*/information")
	if len(files) > device.MaxDevices {
		files = files[:device.MaxDevices]
	}
	infos := make([]map[string]string, 0, len(files))
	for _, f := range files {
		if info, err := gpuInformation(f); err == nil {
			info[""] = f
			infos = append(infos, info)
		}
	}
	for i, d := range devs {
		nodes[i], errs[i] = gpuNode(e, infos, d)
	}
	return nodes, errs
}

func gpuNode(e *presence.Env, infos []map[string]string, d driver.DeviceRef) ([]string, error) {
	if len(infos) == 0 {
		return nil, fmt.Errorf("%s lists no GPU (the kernel driver's information files say which /dev/nvidia<N> is which GPU)", e.Path(procGPUs))
	}
	bus := driver.NormalizeBusID(d.PCIBusID)
	for _, info := range infos {
		sameUUID := d.UUID != "" && strings.EqualFold(info["GPU UUID"], d.UUID)
		sameBus := bus != "" && driver.NormalizeBusID(info["Bus Location"]) == bus
		if !sameUUID && !sameBus {
			continue
		}
		minor, err := strconv.ParseUint(info["Device Minor"], 10, 8)
		if err != nil {
			return nil, fmt.Errorf("%s: Device Minor %q is not a number of 0..255", info[""], info["Device Minor"])
		}
		node := "/dev/nvidia" + strconv.FormatUint(minor, 10)
		if problem := e.NodeProblem(node); problem != "" {
			return nil, fmt.Errorf("%s %s", e.Path(node), problem)
		}
		return []string{node}, nil
	}
	return nil, fmt.Errorf("no %s/*/information names UUID %q or bus %q", e.Path(procGPUs), d.UUID, d.PCIBusID)
}

// gpuInformation reads the "Field: value" lines of an information file
// (a few hundred bytes; at most 64 KiB are read).
func gpuInformation(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, 12)
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out, nil
}

// sameVersion is every *.so.<version> beside libcuda's real file, where
// its name carries the driver's version (libcuda.so.580.95.05: at least
// major.minor), as nvidia-ctk finds the driver's libraries. A file named
// otherwise (a fake's libcuda.so.1) has none.
func sameVersion(real string) []string {
	_, version, ok := strings.Cut(filepath.Base(real), ".so.")
	if !ok || !strings.Contains(version, ".") || strings.ContainsAny(version, "*?[\\") {
		return nil
	}
	return []string{filepath.Join(filepath.Dir(real), "*.so."+version)}
}
