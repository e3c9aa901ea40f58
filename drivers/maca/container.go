package maca

import (
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// container is what a container needs to use MetaX GPUs (CDI specs): the
// control node /dev/mxcd and each GPU's DRM nodes, which MetaX's container
// instructions pass (--device=/dev/mxcd --device=/dev/dri; see
// presence.go), each GPU's found under its PCI device in sysfs
// (driver.DRMNodes), and MXSML. No MACA visible-devices variable is
// confirmed to take UUIDs: the nodes alone select the GPUs.
var container = driver.Container{
	Control:   []string{controlNode},
	Nodes:     driver.EachDevice(func(e *presence.Env, d driver.DeviceRef) ([]string, error) { return driver.DRMNodes(e, d.PCIBusID) }),
	Libraries: []clib.Library{MXSMLLibrary},
}
