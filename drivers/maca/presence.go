package maca

import (
	"fmt"
	"path"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is MACA's presence tier: MXSML's view of the GPUs
// (libmxsml.so), else /dev/mxcd and the metax render nodes. The driver core
// adds where libmcruntime is (found and checked, not loaded); mcInit never
// runs.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{MXSML(e), nodes(e)}
}

// controlNode is MetaX's control device, one per host, which MetaX's
// container instructions pass with /dev/dri (MetaX-MACA/mcoplib README.md:
// --device=/dev/dri --device=/dev/mxcd; vLLM-metax's docs likewise).
const controlNode = "/dev/mxcd"

// renderDriver is the kernel driver of MetaX's DRM nodes: gpustack/runtime
// detector/metax.py maps each GPU through
// /sys/module/metax/drivers/pci:metax/<bdf>/drm/{cardN,renderDN}.
const renderDriver = "metax"

// nodes counts MetaX GPUs from device nodes: /dev/mxcd must be there, then
// one /dev/dri/renderDN per GPU whose sysfs driver
// (/sys/class/drm/renderDN/device/driver) is metax. Render nodes are in
// minor-number order, taken to be the runtime's order (not confirmed).
func nodes(e *presence.Env) presence.Report {
	if !e.IsCharDevice(controlNode) {
		r := presence.Report{Source: presence.SourceNodes}
		r.Reason = fmt.Sprintf("%s is not a character device here: no MetaX GPU is usable (start the container with --device=/dev/mxcd --device=/dev/dri)", e.Path(controlNode))
		return r
	}
	var devs []presence.Device
	var notes []string
	for _, d := range e.CharNodes("/dev/dri", "renderD") {
		name := path.Base(d.Node)
		drv, err := e.DriverOf("/sys/class/drm/" + name + "/device/driver")
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("%s: driver unknown (%v): not counted", name, err))
		case drv == renderDriver:
			devs = append(devs, d)
		}
	}
	return presence.NodesOf("/dev/dri/renderD* of metax", devs, notes, e.VisibleRules(Visibility), e)
}
