package mlu

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// container is what a container needs to use Cambricon MLUs (CDI specs):
// the control node /dev/cambricon_ctl beside the /dev/cambricon_dev<N>
// nodes (the k8s device plugin mounts both: see presence.go) and CNDev.
// Which node is which CNRT device, and whether MLU_VISIBLE_DEVICES takes
// UUIDs, are not confirmed: a spec carries only the "all" device.
var container = driver.Container{
	Control:   deviceNodes.Control,
	Libraries: []clib.Library{CNDevLibrary},
}
