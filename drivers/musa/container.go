package musa

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// container is what a container needs to use Moore Threads GPUs (CDI
// specs): the /dev/mtgpu.* nodes (DeviceNodes) and MTML. Which node is
// which MUSA device, and whether MUSA_VISIBLE_DEVICES takes UUIDs, are not
// confirmed by any public Moore Threads source: a spec carries only the
// "all" device, every node, and no variable. Control nodes: none
// confirmed (Moore Threads' docker instructions also pass /dev/dri, whose
// nodes are not told apart by GPU here).
var container = driver.Container{
	Libraries: []clib.Library{mtmlLibrary},
}
