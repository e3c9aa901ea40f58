package kunlunxin

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// container is what a container needs to use Kunlunxin XPUs (CDI specs):
// the control node /dev/xpuctrl beside the /dev/xpu<N> nodes (see
// presence.go) and XPUML. XPU_VISIBLE_DEVICES takes ordinals only and
// which node is which XRE device is not confirmed: a spec carries only
// the "all" device.
var container = driver.Container{
	Control:   deviceNodes.Control,
	Libraries: []clib.Library{XPUMLLibrary},
}
