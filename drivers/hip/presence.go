package hip

import (
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/presence"
)

// Presence is HIP's presence tier, for driver.WithFacts: the KFD topology in
// sysfs (GPU nodes, their names, memory and unique ids;
// ROCR_VISIBLE_DEVICES then HIP_VISIBLE_DEVICES applied as ROCm applies
// them), else /dev/kfd and the amdgpu render nodes; libamdhip64 is found and
// checked but not loaded, and hipInit never runs.
func Presence(opts ...presence.Option) func(*driver.Backend) driver.Facts {
	return func(b *driver.Backend) driver.Facts {
		return presence.Facts(b, Vendor.Name, presence.KFD(opts...), presence.Nodes(presence.AMD, opts...))
	}
}
