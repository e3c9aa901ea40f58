package kunlunxin

import (
	"fmt"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is Kunlunxin's presence tier: XPUML's view of the XPUs
// (libxpuml.so.1), else the /dev/xpu<N> nodes. The driver core adds where
// libxpurt is (found and checked, not loaded); XRE is never called.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{XPUML(e), presence.Nodes(deviceNodes, e)}
}

// deviceNodes are Kunlunxin's: /dev/xpu<N>, one per compute device (a K200
// card has two), N the physical id (the kernel driver's kl_drv.h
// DEVICE_NAME "xpu", kl_main.c kl_create_device), and /dev/xpuctrl, the
// control node (ctrldev_create; the XRE user guide).
var deviceNodes = presence.NodeSpec{
	What:     "/dev/xpu*",
	Dir:      "/dev",
	Prefixes: []string{"xpu"},
	Control:  []string{"/dev/xpuctrl"},
	Visible:  VisibleDevicesEnv,
}

// visible applies XPU_VISIBLE_DEVICES to what XPUML lists. Only lists of
// ordinals are seen in use (Paddle's xpu_info.cc, vLLM-Kunlun); they are
// read with CUDA's rules (presence.Visible: an all-space value, which
// Paddle reads as "no XPU", selects nothing). XPUML knows no UUIDs, so a
// UUID list cannot be resolved (presence.ErrUndecidable).
func visible(e *presence.Env) func([]presence.Device) ([]presence.Device, string, error) {
	return func(all []presence.Device) ([]presence.Device, string, error) {
		value, set := e.Lookup(VisibleDevicesEnv)
		devs, err := presence.Visible(all, value, set)
		if err != nil {
			err = fmt.Errorf("%s: %w", VisibleDevicesEnv, err)
		}
		return devs, presence.Visibility(VisibleDevicesEnv, value, set), err
	}
}
