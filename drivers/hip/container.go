package hip

import (
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// container is what a container needs to use AMD/Hygon GPUs (CDI specs):
// /dev/kfd, which every ROCm process opens (see kfd.go), and each GPU's
// DRM nodes (/dev/dri/cardN, /dev/dri/renderDN), found under its PCI
// device in sysfs (driver.DRMNodes), which is what ROCm's own container
// instructions pass (--device=/dev/kfd --device=/dev/dri). The ROCm
// libraries beside libamdhip64 are the image's (a ROCm image ships its
// user-space stack; the kernel driver is the host's), so only the driver
// library found is mounted. ROCR_VISIBLE_DEVICES takes UUIDs ("GPU-<16
// hex>", ROCR's amd_filter_device.cpp: presence.VisibleROCR).
var container = driver.Container{
	Control:    []string{"/dev/kfd"},
	Nodes:      driver.EachDevice(func(e *presence.Env, d driver.DeviceRef) ([]string, error) { return driver.DRMNodes(e, d.PCIBusID) }),
	VisibleEnv: ROCRVisibleDevicesEnv,
}
