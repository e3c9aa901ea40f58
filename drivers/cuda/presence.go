package cuda

import (
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/presence"
)

// Presence is CUDA's presence tier, for driver.WithFacts: NVML's view of the
// GPUs (libnvidia-ml.so.1; CUDA_VISIBLE_DEVICES applied as the CUDA runtime
// applies it), else the /dev/nvidia* nodes, and what libcuda says without
// cuInit (it opens; cuDriverGetVersion). No driver is initialized, so a
// process that forks afterwards keeps a working child.
func Presence(opts ...presence.Option) func(*driver.Backend) driver.Facts {
	return func(b *driver.Backend) driver.Facts {
		return presence.Facts(b, Vendor.Name, presence.NVML(opts...), presence.Nodes(presence.NVIDIA, opts...))
	}
}
