package gcu

import (
	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is the GCU's presence tier: EFML's view of the GCUs
// (libefml.so), else the /dev/gcu<N> nodes; TOPS_VISIBLE_DEVICES applied to
// either. The driver core adds where libtopsrt is (found and checked, not
// opened); topsInit never runs.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{EFML(e), nodes(e)}
}

// deviceNodes are Enflame's: /dev/gcu<N>, one per GCU, and /dev/gcuctl,
// the driver's control node (EnflameTechnology/gcushare
// config/topscloud.json: "mainDevice": ["/dev/gcu"], "driverDevice":
// ["/dev/gcuctl"]; go-eflib env.go GCU_DEV_NAME "/dev/gcu"). /dev/vgcu<N>
// (virtual GCUs) are not counted: "gcu" followed by a number matches
// neither /dev/gcuctl nor /dev/vgcu<N>.
var deviceNodes = presence.NodeSpec{
	What:     "/dev/gcu*",
	Dir:      "/dev",
	Prefixes: []string{"gcu"},
	Control:  []string{"/dev/gcuctl"},
	Visible:  VisibleDevicesEnv,
}

// nodes is presence.Nodes over deviceNodes with the TOPS runtime's
// visibility rules (Visibility) in place of CUDA_VISIBLE_DEVICES' alone.
func nodes(e *presence.Env) presence.Report {
	var all []presence.Device
	for _, p := range deviceNodes.Prefixes {
		all = append(all, e.CharNodes(deviceNodes.Dir, p)...)
	}
	var notes []string
	if len(all) > 0 {
		for _, c := range deviceNodes.Control {
			if !e.IsCharDevice(c) {
				notes = append(notes, e.Path(c)+" is missing: the runtime needs it")
			}
		}
	}
	return presence.NodesOf(deviceNodes.What, all, notes, e.VisibleRules(Visibility), e)
}
