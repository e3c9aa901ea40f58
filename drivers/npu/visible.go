package npu

import (
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/visible"
)

// Visibility is how AscendCL reads ASCEND_RT_VISIBLE_DEVICES: decimal
// logical ids, ascending and unique, anything else ending the list or
// hiding every NPU (visible.AscendRT cites hicann/runtime's
// Runtime::GetVisibleDevices line by line; CANN 8.5's environment-variable
// reference, envref_07_0028, says the same). The devices are the runtime's
// logical devices in logical-id order: DCMI's answer is sorted so.
// ASCEND_VISIBLE_DEVICES is the container runtime's, never a process's:
// not part of the rules.
var Visibility = &visible.Rules{
	Runtime: "AscendCL",
	Stages: []visible.Stage{{
		Vars:    []visible.Var{{Name: VisibleDevicesEnv}},
		Dialect: visible.AscendRT{},
	}},
}

// visibleAscendRT applies an ASCEND_RT_VISIBLE_DEVICES value (a set
// variable) to devs, the logical devices in logical-id order: the visible
// ones renumbered, and a note (or "") when the runtime rejects the list.
func visibleAscendRT(devs []presence.Device, value string) ([]presence.Device, string) {
	sel, note := visible.SelectAscendRT(value, len(devs))
	out := make([]presence.Device, 0, len(sel))
	for i, s := range sel {
		d := devs[s]
		d.Index = i
		out = append(out, d)
	}
	return out, note
}
