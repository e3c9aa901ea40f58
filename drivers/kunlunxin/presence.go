package kunlunxin

import (
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
	Rules:    Visibility,
}
