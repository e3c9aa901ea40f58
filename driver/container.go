package driver

import (
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// Container says what a container needs, besides the driver library, to
// use the vendor's devices: what a CDI spec (package fleet/cdi) injects.
// Each fact is cited beside it in the vendor package; what is not
// confirmed is left out (a nil Nodes: the devices cannot be told apart,
// and only the vendor's "all" device is written).
type Container struct {
	// Control are the nodes the runtime opens besides each device's own
	// (/dev/nvidiactl, /dev/nvidia-uvm, HIP's /dev/kfd). Each one is
	// injected where it is a character device here, and left out
	// otherwise.
	Control []string
	// Nodes gives each device's own nodes (/dev/nvidia3 for the GPU whose
	// minor number is 3), from what the tier knows of it: nodes[i] for
	// devs[i], or errs[i] saying why they are not known (that device is
	// left out). One call for every device, so that what is read once
	// (the kernel driver's files) is read once. nil: not known; only the
	// vendor's "all" device is written, with every node of
	// Vendor.DeviceNodes.
	Nodes func(e *presence.Env, devs []DeviceRef) (nodes [][]string, errs []error)
	// Libraries are the libraries a container needs besides the driver
	// library: the management library (NVML). Each is searched as the
	// presence tier searches it (found and checked, never opened) and
	// mounted with its soname links where it is found.
	Libraries []clib.Library
	// Companions gives, from the real file of the driver library
	// ("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"), the
	// filepath.Glob patterns of the other files of the same driver that
	// the library loads (NVIDIA's: every *.so.580.95.05 beside it). nil:
	// none.
	Companions func(driverFile string) []string
	// VisibleEnv is the visible-devices variable that names devices by
	// UUID (CUDA_VISIBLE_DEVICES=GPU-...), which a spec sets to the UUIDs
	// of the devices it injects: a host index means nothing in a
	// container. "" where no variable of the vendor is confirmed to take
	// UUIDs: the device nodes alone select the devices then.
	VisibleEnv string
}

// NodesOf calls c.Nodes behind the recovery every function of a vendor
// description runs behind: a panic of the vendor's code is an error
// matching ErrPanic, with the panic's message, never the host's end. nil,
// nil, nil where c.Nodes is nil.
func (c *Container) NodesOf(e *presence.Env, devs []DeviceRef) (nodes [][]string, errs []error, err error) {
	if c.Nodes == nil {
		return nil, nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			nodes, errs, err = nil, nil, fmt.Errorf("%w: Container.Nodes panicked: %v", ErrPanic, r)
		}
	}()
	nodes, errs = c.Nodes(e, devs)
	return nodes, errs, nil
}

// CompanionsOf calls c.Companions behind the same recovery (see NodesOf);
// nil, nil where it is nil.
func (c *Container) CompanionsOf(driverFile string) (patterns []string, err error) {
	if c.Companions == nil {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			patterns, err = nil, fmt.Errorf("%w: Container.Companions panicked: %v", ErrPanic, r)
		}
	}()
	return c.Companions(driverFile), nil
}

// DeviceRef is one device as a tier knows it, for Container.Nodes.
type DeviceRef struct {
	Index    int    // the visible index
	UUID     string // in the vendor's form; "" when unknown
	PCIBusID string // in the vendor's form; "" when unknown
}

// NormalizeBusID is a PCI address in sysfs's form, lowercase with a 4-digit
// domain ("0000:06:00.0"), from any of the forms the libraries give
// (NVML's "00000000:06:00.0", "06:00.0"); "" when s is not one.
func NormalizeBusID(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	parts := strings.Split(s, ":")
	switch len(parts) {
	case 2:
		parts = append([]string{"0000"}, parts...)
	case 3:
	default:
		return ""
	}
	dom := strings.TrimLeft(parts[0], "0")
	if len(dom) > 4 {
		return ""
	}
	dom = strings.Repeat("0", 4-len(dom)) + dom
	bus, devfn := parts[1], parts[2]
	if len(bus) != 2 || len(devfn) != 4 || devfn[2] != '.' || !isHex(bus+devfn[:2]+devfn[3:]) || !isHex(dom) {
		return ""
	}
	return dom + ":" + bus + ":" + devfn
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// EachDevice makes a Container.Nodes of a function of one device.
func EachDevice(f func(e *presence.Env, d DeviceRef) ([]string, error)) func(*presence.Env, []DeviceRef) ([][]string, []error) {
	return func(e *presence.Env, devs []DeviceRef) ([][]string, []error) {
		nodes, errs := make([][]string, len(devs)), make([]error, len(devs))
		for i, d := range devs {
			nodes[i], errs[i] = f(e, d)
		}
		return nodes, errs
	}
}

// DRMNodes are the DRM nodes of the PCI device bus (any form
// NormalizeBusID reads): /dev/dri/cardN and /dev/dri/renderDN, from the
// entries of /sys/bus/pci/devices/<bus>/drm under e's root. The kernel
// makes each DRM minor a child of its PCI device in sysfs
// (drivers/gpu/drm/drm_sysfs.c, drm_sysfs_minor_alloc: kdev->parent =
// minor->dev->dev); AMD's Kubernetes device plugin finds a GPU's nodes the
// same way (ROCm/k8s-device-plugin internal/pkg/amdgpu/amdgpu.go). Each
// node must be a character device under the root.
func DRMNodes(e *presence.Env, bus string) ([]string, error) {
	b := NormalizeBusID(bus)
	if b == "" {
		return nil, fmt.Errorf("the PCI bus id %q is not one (want 0000:06:00.0)", bus)
	}
	dir := "/sys/bus/pci/devices/" + b + "/drm"
	ents, err := os.ReadDir(e.Path(dir))
	if err != nil {
		return nil, fmt.Errorf("its DRM nodes: %w", err)
	}
	var out []string
	for _, ent := range ents {
		n := ent.Name()
		if !strings.HasPrefix(n, "card") && !strings.HasPrefix(n, "renderD") {
			continue
		}
		node := path.Join("/dev/dri", n)
		if e.IsCharDevice(node) {
			out = append(out, node)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no DRM node that is a character device under /dev/dri", e.Path(dir))
	}
	sort.Strings(out)
	return out, nil
}
