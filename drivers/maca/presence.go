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
	return presence.NodesOf("/dev/dri/renderD* of metax", devs, notes, visible(e), e)
}

// visible applies the visibility variables the presence tier can decide.
// CUDA_VISIBLE_DEVICES is read with CUDA's rules (presence.Visible):
// MetaX's own stack selects devices with it (vLLM-metax, Ray), so the MACA
// runtime is taken to honour it as CUDA's does. MACA_VISIBLE_DEVICES is in
// wide use too, but whether the runtime applies it, how, and which of the
// two wins is not confirmed by any MetaX source: where it is set the
// answer is presence.ErrUndecidable (FLAGOS_PROBE=isolated asks the
// runtime itself).
func visible(e *presence.Env) func([]presence.Device) ([]presence.Device, string, error) {
	return func(all []presence.Device) ([]presence.Device, string, error) {
		if v, ok := e.Lookup(VisibleDevicesEnv); ok {
			return nil, VisibleDevicesEnv + "=" + v, fmt.Errorf("%w: %s=%q is set, and how the MACA runtime applies it (beside %s) is not confirmed",
				presence.ErrUndecidable, VisibleDevicesEnv, v, CUDAVisibleDevicesEnv)
		}
		value, set := e.Lookup(CUDAVisibleDevicesEnv)
		devs, err := presence.Visible(all, value, set)
		if err != nil {
			err = fmt.Errorf("%s: %w", CUDAVisibleDevicesEnv, err)
		}
		return devs, presence.Visibility(CUDAVisibleDevicesEnv, value, set), err
	}
}
