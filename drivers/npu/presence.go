package npu

import (
	"github.com/flagos-ai/flagshim/tier/presence"
)

// presenceSources is the NPU's presence tier: DCMI's view (libdcmi.so;
// ASCEND_RT_VISIBLE_DEVICES applied), else the /dev/davinci<N> nodes. The
// driver core adds where libascendcl is (found and checked, not opened);
// aclInit never runs.
func presenceSources(e *presence.Env) []presence.Report {
	return []presence.Report{DCMI(e), Nodes(e)}
}

// The device nodes. /dev/davinci<N> is one per NPU, N its physical id (DRV
// src/custom/dev_prod/user/dsmi_product_ext/dsmi_product_ext.c: sprintf
// "/dev/davinci%u", phyId); Huawei's container runtime mounts a virtual
// NPU's /dev/vdavinci<N> as /dev/davinci<N> and davinci_manager_docker as
// /dev/davinci_manager (MC process.go getMountPath), so a container shows
// the same names. The runtime also needs the driver's control nodes, as its
// health check lists them (dsmi_product_ext.c dsmi_get_driver_health): the
// PCIe card form /dev/davinci_manager, /dev/devmm_svm and /dev/hisi_hdc; the
// SoC form /dev/davinci_manager and /dev/svm0.
const (
	nodesWhat      = "/dev/davinci*"
	nodeDir        = "/dev"
	nodePrefix     = "davinci"
	nodeManager    = "/dev/davinci_manager"
	nodeManagerAlt = "/dev/davinci_manager_docker" // 310B hosts (MC addAscend310BManagerDevice)
	nodeSVM        = "/dev/devmm_svm"
	nodeHDC        = "/dev/hisi_hdc"
	nodeSVMSoC     = "/dev/svm0"
)

// Nodes counts the /dev/davinci<N> nodes under the root and applies
// ASCEND_RT_VISIBLE_DEVICES to them in node-number order (the runtime's
// logical ids follow its own order, which the nodes cannot tell: the count
// is right, which device is which is not known). Names and memory are
// unknown. A missing control node is a note.
func Nodes(e *presence.Env) presence.Report {
	all := e.CharNodes(nodeDir, nodePrefix)
	var notes []string
	if len(all) > 0 {
		notes = controlNotes(e)
	}
	value, set := e.Lookup(VisibleDevicesEnv)
	if set {
		if _, note := visibleAscendRT(all, value); note != "" {
			notes = append(notes, VisibleDevicesEnv+": "+note)
		}
	}
	return presence.NodesOf(nodesWhat, all, notes, func(devs []presence.Device) ([]presence.Device, string, error) {
		if !set {
			return devs, "", nil
		}
		shown, _ := visibleAscendRT(devs, value)
		return shown, presence.Visibility(VisibleDevicesEnv, value, set), nil
	}, e)
}

// controlNotes names the control nodes the runtime needs that are missing
// here, for the card form or the SoC form, whichever is nearer complete.
func controlNotes(e *presence.Env) []string {
	var notes []string
	if !e.IsCharDevice(nodeManager) && !e.IsCharDevice(nodeManagerAlt) {
		notes = append(notes, e.Path(nodeManager)+" is missing: the runtime needs it")
	}
	if e.IsCharDevice(nodeSVMSoC) {
		return notes // the SoC form: davinci_manager and svm0
	}
	for _, n := range []string{nodeSVM, nodeHDC} {
		if !e.IsCharDevice(n) {
			notes = append(notes, e.Path(n)+" is missing: the runtime needs it")
		}
	}
	return notes
}
