package cuda

import (
	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is CUDA's presence tier: NVML's view of the GPUs
// (libnvidia-ml.so.1; CUDA_VISIBLE_DEVICES applied as the CUDA runtime
// applies it), else the /dev/nvidia* nodes. The driver core adds where
// libcuda is (found and checked, not opened). No driver is initialized, so
// a process that forks afterwards keeps a working child.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{NVML(e), presence.Nodes(deviceNodes, e)}
}

// deviceNodes are NVIDIA's: /dev/nvidiaN, one per GPU (nvidiactl,
// nvidia-uvm, nvidia-modeset and nvidia-caps are not GPUs; N is the
// driver's minor number, not the CUDA ordinal), and /dev/nvidiactl, which
// CUDA and NVML need besides.
var deviceNodes = presence.NodeSpec{
	What:     "/dev/nvidia*",
	Dir:      "/dev",
	Prefixes: []string{"nvidia"},
	Control:  []string{"/dev/nvidiactl"},
	Visible:  VisibleDevicesEnv,
	Rules:    Visibility,
}
