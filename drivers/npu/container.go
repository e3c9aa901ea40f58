package npu

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
)

// container is what a container needs to use Ascend NPUs (CDI specs): the
// driver's control nodes as its health check lists them, each where it
// exists (the card form /dev/davinci_manager, /dev/devmm_svm,
// /dev/hisi_hdc; the SoC form /dev/svm0; 310B hosts'
// /dev/davinci_manager_docker: see presence.go), beside the
// /dev/davinci<N> nodes, and DCMI. Which node is which AscendCL logical
// device, and a variable that takes UUIDs, are not confirmed: a spec
// carries only the "all" device.
var container = driver.Container{
	Control:   []string{nodeManager, nodeManagerAlt, nodeSVM, nodeHDC, nodeSVMSoC},
	Libraries: []clib.Library{DCMILibrary},
}
