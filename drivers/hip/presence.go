package hip

import (
	"fmt"
	"path"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is HIP's presence tier: the KFD topology in sysfs (GPU
// nodes, their names, memory and unique ids; ROCR_VISIBLE_DEVICES then
// HIP_VISIBLE_DEVICES applied as ROCm applies them), else /dev/kfd and the
// amdgpu render nodes. The driver core adds where libamdhip64 is (found and
// checked, not loaded); hipInit never runs.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{KFD(e), nodes(e)}
}

// renderDrivers are the kernel drivers of AMD/Hygon render nodes: amdgpu,
// and hydcu (Hygon's kernel module name; not confirmed to be the render
// node's driver).
var renderDrivers = []string{"amdgpu", "hydcu"}

// nodes counts AMD/Hygon GPUs from device nodes: /dev/kfd (every ROCm
// process opens it) must be there, then one /dev/dri/renderDN per GPU whose
// sysfs driver (/sys/class/drm/renderDN/device/driver) is AMD's or Hygon's.
func nodes(e *presence.Env) presence.Report {
	const what = "/dev/dri/renderD* of amdgpu"
	if problem := e.NodeProblem("/dev/kfd"); problem != "" {
		r := presence.Report{Source: presence.SourceNodes}
		r.Reason = fmt.Sprintf("%s %s here: no AMD/Hygon GPU is usable (start the container with --device=/dev/kfd --device=/dev/dri)", e.Path("/dev/kfd"), problem)
		return r
	}
	var devs []presence.Device
	var notes []string
	for _, d := range e.CharNodes("/dev/dri", "renderD") {
		name := path.Base(d.Node)
		drv, err := e.DriverOf("/sys/class/drm/" + name + "/device/driver")
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: driver unknown (%v): not counted", name, err))
			continue
		}
		for _, want := range renderDrivers {
			if drv == want {
				devs = append(devs, d)
				break
			}
		}
	}
	return presence.NodesOf(what, devs, notes, e.VisibleRules(Visibility), e)
}
