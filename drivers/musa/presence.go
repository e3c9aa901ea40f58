package musa

import (
	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is MUSA's presence tier: the Moore Threads management
// library's view (libmtml.so; MUSA_VISIBLE_DEVICES applied), else the
// /dev/mtgpu.* nodes. The driver core adds where libmusa is (found and
// checked, not opened); muInit never runs.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{MTML(e), presence.Nodes(deviceNodes, e)}
}

// deviceNodes are Moore Threads': /dev/mtgpu.N (what Moore Threads' docker
// instructions pass with --device, alongside /dev/dri); /dev/mtgpuN is
// accepted too.
var deviceNodes = presence.NodeSpec{
	What:     "/dev/mtgpu.*",
	Dir:      "/dev",
	Prefixes: []string{"mtgpu.", "mtgpu"},
	Visible:  VisibleDevicesEnv,
	Rules:    Visibility,
}
