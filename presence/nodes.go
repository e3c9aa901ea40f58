package presence

// Device nodes: the files a runtime opens to reach its GPUs. Stat-ing them
// opens nothing. Only character devices count (a leftover regular file or
// folder of the same name does not).
//
//	NVIDIA: /dev/nvidiaN, one per GPU (nvidiactl, nvidia-uvm, nvidia-modeset
//	        and nvidia-caps are not GPUs). N is the driver's minor number, not
//	        the CUDA ordinal.
//	Moore Threads: /dev/mtgpu.N (what Moore Threads' docker instructions pass
//	        with --device, alongside /dev/dri); /dev/mtgpuN is accepted too.
//	AMD/Hygon: /dev/kfd, plus one /dev/dri/renderDN per GPU whose sysfs
//	        driver (/sys/class/drm/renderDN/device/driver) is amdgpu, or
//	        hydcu (Hygon's kernel module name; not confirmed to be the render
//	        node's driver).

import (
	"fmt"
	"os"
	"path"
	"strings"

	"go.uber.org/zap"
)

// Vendor names a GPU vendor for Nodes.
type Vendor string

// The vendors Nodes knows.
const (
	NVIDIA       Vendor = "nvidia"
	MooreThreads Vendor = "mthreads"
	AMD          Vendor = "amd" // and Hygon, which uses the same KFD interface
)

// ErrUnknownVendor: Nodes was given a vendor it does not know.
var ErrUnknownVendor = fmt.Errorf("presence: unknown vendor (known: %s, %s, %s)", AMD, MooreThreads, NVIDIA)

// amdRenderDrivers are the kernel drivers of AMD/Hygon render nodes.
var amdRenderDrivers = []string{"amdgpu", "hydcu"}

// Nodes counts the vendor's GPU device nodes under /dev, then applies the
// vendor's visibility variable (ordinals only: the nodes carry no UUID, so a
// UUID list is ErrUndecidable). It is the fallback where the management
// library is missing: a node says a GPU is attached to this machine or
// container, not that its runtime works. Devices come in node-number order.
func Nodes(v Vendor, opts ...Option) (r Report) {
	r.Source = SourceNodes
	defer guard(&r)
	c := newConfig(opts)
	var all []Device
	var what, envName string
	switch v {
	case NVIDIA:
		what, envName = "/dev/nvidia*", CUDAVisibleEnv
		all = c.charNodes("/dev", "nvidia")
		if len(all) > 0 && !c.isCharDevice("/dev/nvidiactl") {
			r.Notes = append(r.Notes, c.path("/dev/nvidiactl")+" is missing: CUDA and NVML need it")
		}
	case MooreThreads:
		what, envName = "/dev/mtgpu.*", MUSAVisibleEnv
		all = append(c.charNodes("/dev", "mtgpu."), c.charNodes("/dev", "mtgpu")...)
	case AMD:
		what = "/dev/dri/renderD* of amdgpu"
		if !c.isCharDevice("/dev/kfd") {
			r.Reason = fmt.Sprintf("%s is not a character device here: no AMD/Hygon GPU is usable (start the container with --device=/dev/kfd --device=/dev/dri)", c.path("/dev/kfd"))
			return r
		}
		all = c.amdRenderNodes(&r.Notes)
	default:
		r.Err = fmt.Errorf("%w: %q", ErrUnknownVendor, string(v))
		r.Reason = r.Err.Error()
		return r
	}
	for i := range all {
		all[i].Index = i
	}
	r.Total = len(all)
	var devs []Device
	var err error
	if v == AMD {
		devs, r.Visibility, err = visibleHIP(all, c.lookupEnv)
	} else {
		value, set := c.lookupEnv(envName)
		r.Visibility = visibility(envName, value, set)
		devs, err = Visible(all, value, set)
	}
	if err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("%d %s node%s, but %s cannot be resolved from device nodes: %v", r.Total, what, plural(r.Total), r.Visibility, err)
		return r
	}
	r.Devices = devs
	r.Reason = countReason(what, r.Total, len(devs), r.Visibility)
	c.log.Debug("presence: device nodes", zap.String("vendor", string(v)), zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// charNodes are the character devices dir/prefixN.
func (c *config) charNodes(dir, prefix string) []Device {
	ents, err := c.numbered(dir, prefix)
	if err != nil {
		return nil
	}
	var out []Device
	for _, e := range ents {
		p := path.Join(dir, e.name)
		if c.isCharDevice(p) {
			out = append(out, Device{SourceIndex: e.n, Node: c.path(p)})
		}
	}
	return out
}

// amdRenderNodes are the render nodes whose driver is AMD's or Hygon's.
func (c *config) amdRenderNodes(notes *[]string) []Device {
	var out []Device
	for _, d := range c.charNodes("/dev/dri", "renderD") {
		name := path.Base(d.Node)
		drv, err := c.driverOf("/sys/class/drm/" + name + "/device/driver")
		if err != nil {
			*notes = append(*notes, fmt.Sprintf("%s: driver unknown (%v): not counted", name, err))
			continue
		}
		for _, want := range amdRenderDrivers {
			if drv == want {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// driverOf is the name of the driver a sysfs "driver" symlink points to.
func (c *config) driverOf(link string) (string, error) {
	target, err := os.Readlink(c.path(link))
	if err != nil {
		return "", err
	}
	return path.Base(strings.TrimRight(target, "/")), nil
}
