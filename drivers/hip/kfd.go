package hip

// The KFD topology. The amdgpu kernel driver (and Hygon's, which shares
// KFD) publishes every node, CPU or GPU, under
// /sys/class/kfd/kfd/topology/nodes/N/ with the files gpu_id, name and
// properties, and mem_banks/M/properties. The names below are those that
// node_show and mem_show print in the kernel's
// drivers/gpu/drm/amd/amdkfd/kfd_topology.c ("name value" lines, unsigned
// decimal):
//
//	simd_count           0 for a CPU node (ROCR counts GPUs as NumFComputeCores != 0)
//	gfx_target_version   major*10000 + minor*100 + stepping: 90010 is gfx90a
//	domain, location_id  PCI domain and (bus << 8 | devfn)
//	unique_id            GPU nodes only, 0 when the ASIC has none; ROCR's UUID
//	                     is "GPU-" + its 16 hex digits (amd_filter_device.cpp)
//	mem_banks/*/properties heap_type (1 FRAME_BUFFER_PUBLIC, 2 FRAME_BUFFER_PRIVATE:
//	                     the VRAM, as ROCT's hsakmttypes.h numbers HSA_HEAPTYPE)
//	                     and size_in_bytes
//
// A node whose GPU the device cgroup denies reads as EPERM
// (kfd_devcgroup_check_permission): it is not this process's GPU.

import (
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"path"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// SourceKFD is the presence Report.Source of the KFD topology's answer.
const SourceKFD = "kfd"

// ErrNoTopology: the KFD topology is not in sysfs (no amdgpu driver).
var ErrNoTopology = errors.New("hip: no KFD topology")

const kfdNodes = "/sys/class/kfd/kfd/topology/nodes"

// Heap types of VRAM banks (HSA_HEAPTYPE_FRAME_BUFFER_PUBLIC and _PRIVATE).
const (
	heapFrameBufferPublic  = 1
	heapFrameBufferPrivate = 2
)

// KFD reads the AMD/Hygon GPUs from the KFD topology in sysfs, checks that
// /dev/kfd (the node every ROCm process opens) is there, then applies
// ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES as the ROCm runtimes do
// (Visibility). It loads no library. Devices come in node order, which
// is ROCR's enumeration order; ROCR may still skip a GPU it does not
// support, which sysfs cannot tell.
func KFD(e *presence.Env) (r presence.Report) {
	r.Source = SourceKFD
	defer presence.Guard(&r)
	r.Library = e.Path(kfdNodes)
	nodes, err := e.Numbered(kfdNodes, "")
	if err != nil {
		r.Err = fmt.Errorf("%w: %v", ErrNoTopology, err)
		r.Reason = fmt.Sprintf("no KFD topology at %s: the amdgpu driver is not loaded (or /sys is not mounted)", r.Library)
		return r
	}
	if !presence.CheckCount(&r, "KFD", "the topology", uint64(len(nodes))/2) {
		return r
	}
	var all []presence.Device
	name := namer(e, &r.Notes)
	for _, n := range nodes {
		d, ok := kfdNode(e, n.N, &r.Notes, name)
		if ok {
			d.Index = len(all)
			all = append(all, d)
		}
	}
	r.Total = len(all)
	for _, m := range []string{"amdgpu", "hydcu"} {
		if v, err := e.ReadAttr("/sys/module/" + m + "/version"); err == nil && v != "" {
			r.DriverVersion = v
			break
		}
	}
	if problem := e.NodeProblem("/dev/kfd"); r.Total > 0 && problem != "" {
		r.Err = fmt.Errorf("%w: %s", presence.ErrNoDeviceNode, e.Path("/dev/kfd"))
		r.Reason = fmt.Sprintf("KFD lists %d GPU%s but %s %s here: start the container with --device=/dev/kfd --device=/dev/dri", r.Total, presence.Plural(r.Total), e.Path("/dev/kfd"), problem)
		return r
	}
	r.All = all
	devs, applied, err := e.VisibleRules(Visibility)(all)
	r.Visibility = applied
	if err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("KFD lists %d GPU%s, but the visibility variables cannot be resolved: %v", r.Total, presence.Plural(r.Total), err)
		return r
	}
	r.Devices = devs
	r.Reason = presence.CountReason("KFD", r.Total, len(devs), r.Visibility)
	e.Log().Debug("presence: kfd", zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// kfdNode reads node id; ok is false for a CPU node or one this process
// may not read (noted). Its name is the runtime's (marketing.go) where
// amdgpu.ids has the device, else KFD's ASIC name.
func kfdNode(e *presence.Env, id int, notes *[]string, marketing func(addr string) (string, bool)) (presence.Device, bool) {
	dir := path.Join(kfdNodes, fmt.Sprint(id))
	props, err := readProps(e, dir+"/properties")
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			*notes = append(*notes, fmt.Sprintf("KFD node %d: not this process's (the device cgroup denies it)", id))
		} else {
			*notes = append(*notes, fmt.Sprintf("KFD node %d: %v", id, err))
		}
		return presence.Device{}, false
	}
	if props["simd_count"] == 0 {
		return presence.Device{}, false
	}
	d := presence.Device{SourceIndex: id}
	if name, err := e.ReadAttr(dir + "/name"); err == nil {
		d.Name = name
	}
	if u := props["unique_id"]; u != 0 {
		d.UUID = fmt.Sprintf("GPU-%016x", u)
	}
	if loc, ok := props["location_id"]; ok {
		d.PCIBusID = fmt.Sprintf("%04x:%02x:%02x.%x", props["domain"], (loc>>8)&0xff, (loc>>3)&0x1f, loc&7)
		if name, ok := marketing(d.PCIBusID); ok {
			d.Name = name
		}
	}
	if v := props["gfx_target_version"]; v != 0 {
		d.Major, d.Minor = int(v/10000), int(v/100%100)
	}
	banks, _ := e.Numbered(dir+"/mem_banks", "")
	overflow := false
	for _, b := range banks {
		mp, err := readProps(e, fmt.Sprintf("%s/mem_banks/%d/properties", dir, b.N))
		if err != nil {
			continue
		}
		if h := mp["heap_type"]; h == heapFrameBufferPublic || h == heapFrameBufferPrivate {
			var carry uint64
			d.TotalMemory, carry = bits.Add64(d.TotalMemory, mp["size_in_bytes"], 0)
			overflow = overflow || carry != 0
		}
	}
	if overflow {
		d.TotalMemory = 0 // banks whose sizes overflow 64 bits together: unknown
	}
	return d, true
}

// readProps reads a KFD "properties" file (see parseProps).
func readProps(e *presence.Env, p string) (map[string]uint64, error) {
	s, err := e.ReadAttr(p)
	if err != nil {
		return nil, err
	}
	return parseProps(s), nil
}

// parseProps parses KFD properties: one "name value" pair a line, values
// unsigned decimal, as kfd_topology.c prints them. Lines that are not such
// a pair are skipped; a repeated name keeps its last value.
func parseProps(s string) map[string]uint64 {
	props := map[string]uint64{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || k == "" {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		props[k] = n
	}
	return props
}
