package presence

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// PCI facts from sysfs (/sys/bus/pci/devices/<address>), under the root:
// what the kernel says of a device without any vendor library, in every
// tier alike. Reading them opens no device node and initializes no driver.

// PCIDevice is what sysfs says of one PCI device.
type PCIDevice struct {
	Address string // sysfs's form: "0000:18:00.0"
	Vendor  uint16 // the PCI vendor id (vendor)
	Device  uint16 // the PCI device id (device)
	Class   uint32 // the class code (class): 0x030200
	// NUMANode is numa_node: -1 where the platform gives none.
	NUMANode int
	// LocalCPUs is local_cpulist ("0-47,96-143"); "" where it is absent.
	LocalCPUs string
	// Driver is the kernel driver bound to it ("nvidia"); "" unbound.
	Driver string
	// DriverVersion is its module's version (/sys/module/<m>/version,
	// "580.95.05"); "" where the module gives none (an in-tree driver).
	DriverVersion string
}

// Accelerator reports whether the class is one of an accelerator: display
// controllers (0x03) and processing accelerators (0x12).
func (d PCIDevice) Accelerator() bool {
	c := d.Class >> 16
	return c == 0x03 || c == 0x12
}

// PCIAddress turns a PCI bus id in any of the forms libraries give
// ("00000000:18:00.0", CUDA's and NVML's; "0000:18:00.0"; upper or lower
// case) into sysfs's: a 4-digit domain, lower case. "" when s is not one.
func PCIAddress(s string) string {
	dom, rest, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), ":")
	if !ok || len(dom) == 0 || len(dom) > 8 || len(rest) != len("18:00.0") || rest[2] != ':' || rest[5] != '.' {
		return ""
	}
	d, err := strconv.ParseUint(dom, 16, 32)
	if err != nil || d > 0xffff {
		return ""
	}
	for i, c := range []byte(rest) {
		if i == 2 || i == 5 {
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return fmt.Sprintf("%04x:%s", d, rest)
}

const pciDevices = "/sys/bus/pci/devices"

// PCIDevice reads the PCI device at addr (any form PCIAddress takes). An
// error (matching os.ErrNotExist where sysfs lists no such device) when
// its vendor id cannot be read.
func (e *Env) PCIDevice(addr string) (PCIDevice, error) {
	a := PCIAddress(addr)
	if a == "" {
		return PCIDevice{}, fmt.Errorf("%q is not a PCI address", addr)
	}
	return e.pciDevice(a, true, nil)
}

// pciDevice reads a's attributes: only its ids and class unless full;
// versions caches each module's version by driver name (nil: none).
func (e *Env) pciDevice(a string, full bool, versions map[string]string) (PCIDevice, error) {
	dir := pciDevices + "/" + a
	d := PCIDevice{Address: a, NUMANode: -1}
	v, err := e.hexAttr(dir + "/vendor")
	if err != nil {
		return d, err
	}
	d.Vendor = uint16(v)
	if c, err := e.hexAttr(dir + "/class"); err == nil {
		d.Class = uint32(c)
	}
	if full {
		e.pciDetails(&d, versions)
	}
	return d, nil
}

// pciDetails reads the rest of d (its ids and class read already): the
// device id, the NUMA node, the local CPUs, the kernel driver and its
// module's version (cached by driver name in versions, when not nil).
func (e *Env) pciDetails(d *PCIDevice, versions map[string]string) {
	dir := pciDevices + "/" + d.Address
	if id, err := e.hexAttr(dir + "/device"); err == nil {
		d.Device = uint16(id)
	}
	if s, err := e.pciAttr(dir + "/numa_node"); err == nil {
		if n, err := strconv.Atoi(s); err == nil && n >= -1 && n < 1<<16 {
			d.NUMANode = n
		}
	}
	if s, err := e.pciAttr(dir + "/local_cpulist"); err == nil && len(s) < pciAttrMax {
		d.LocalCPUs = s
	}
	d.Driver, _ = e.DriverOf(dir + "/driver")
	if d.Driver == "" {
		return
	}
	if ver, ok := versions[d.Driver]; ok {
		d.DriverVersion = ver
		return
	}
	if mod, err := e.DriverOf(dir + "/driver/module"); err == nil && validName(mod) {
		if s, err := e.pciAttr("/sys/module/" + mod + "/version"); err == nil && len(s) <= 256 {
			d.DriverVersion = s
		}
	}
	if versions != nil {
		versions[d.Driver] = d.DriverVersion
	}
}

// PCIAccelerators lists the accelerators (Accelerator) sysfs shows of the
// PCI vendor ids given, in address order, each read whole (PCIDevice),
// each module's version once. Which PCI functions are accelerators of
// which vendor is read once per process and root (pciFunctions), since
// every vendor asks; nil when sysfs lists none or cannot be read; at most
// limit devices are kept.
func (e *Env) PCIAccelerators(vendors []uint16, limit int) []PCIDevice {
	var out []PCIDevice
	versions := map[string]string{}
	for _, f := range e.pciFunctions() {
		if !slices.Contains(vendors, f.Vendor) {
			continue
		}
		d := f
		e.pciDetails(&d, versions)
		out = append(out, d)
		if len(out) >= limit {
			break
		}
	}
	return out
}

// pciFunctionsOf caches, per root, the accelerators among the PCI
// functions sysfs lists (their address, vendor id and class), in address
// order.
var pciFunctionsOf sync.Map // root -> *pciFunctions

type pciFunctions struct {
	once sync.Once
	devs []PCIDevice
}

// pciFunctions lists, once per process and root, the PCI functions whose
// class is an accelerator's, with their vendor ids.
func (e *Env) pciFunctions() []PCIDevice {
	v, _ := pciFunctionsOf.LoadOrStore(e.root, new(pciFunctions))
	pf := v.(*pciFunctions)
	pf.once.Do(func() {
		ents, err := os.ReadDir(e.Path(pciDevices))
		if err != nil {
			return
		}
		for _, ent := range ents {
			a := PCIAddress(ent.Name())
			if a == "" || a != ent.Name() {
				continue
			}
			d, err := e.pciDevice(a, false, nil)
			if err == nil && d.Accelerator() {
				pf.devs = append(pf.devs, d)
			}
		}
		slices.SortFunc(pf.devs, func(x, y PCIDevice) int { return strings.Compare(x.Address, y.Address) })
	})
	return pf.devs
}

// hexAttr reads a sysfs attribute written in hex ("0x10de").
func (e *Env) hexAttr(p string) (uint64, error) {
	s, err := e.pciAttr(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
}

// validName reports whether s can be a module's name: no path parts.
func validName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\x00")
}

// pciAttrMax bounds what pciAttr reads: a PCI device's attributes are a
// line each (local_cpulist of a large machine is the longest).
const pciAttrMax = 4096

// pciAttr reads a small sysfs attribute under the root, trimmed, in one
// read (sysfs gives a whole attribute per read): three system calls, where
// os.Open's file costs more (a machine of 4096 devices reads six of them a
// device). An attribute of pciAttrMax bytes or more is an error.
func (e *Env) pciAttr(p string) (string, error) {
	fd, err := unix.Open(e.Path(p), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	var buf [pciAttrMax]byte
	n, err := unix.Read(fd, buf[:])
	for err == unix.EINTR {
		n, err = unix.Read(fd, buf[:])
	}
	switch {
	case err != nil:
		return "", &os.PathError{Op: "read", Path: p, Err: err}
	case n >= len(buf):
		return "", fmt.Errorf("%s: longer than %d bytes", p, pciAttrMax)
	}
	return strings.TrimSpace(string(buf[:n])), nil
}
