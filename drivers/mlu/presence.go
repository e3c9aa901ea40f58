package mlu

import (
	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is the MLU's presence tier: CNDev's view of the MLUs
// (libcndev.so; MLU_VISIBLE_DEVICES applied), else the /dev/cambricon_dev*
// nodes. The driver core adds where libcndrv is (found and checked, not
// opened); cnInit never runs.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{CNDev(e), presence.Nodes(deviceNodes, e)}
}

// deviceNodes are Cambricon's: /dev/cambricon_dev<N>, one per MLU, and
// /dev/cambricon_ctl, the control node CNDev and cnmon use (the MLU kernel
// driver's device/cnhost_dev_sysfs.c names them "cambricon_dev%d" and
// "cambricon_ctl"; the k8s device plugin mounts both, pkg/mlu/const.go).
// /dev/cambricon_ipcm<N> and /dev/cambricon-caps/ (MIM and SR-IOV
// instances) are not whole MLUs and are not counted.
var deviceNodes = presence.NodeSpec{
	What:     "/dev/cambricon_dev*",
	Dir:      "/dev",
	Prefixes: []string{"cambricon_dev"},
	Control:  []string{"/dev/cambricon_ctl"},
	Visible:  VisibleDevicesEnv,
	Rules:    Visibility,
}
