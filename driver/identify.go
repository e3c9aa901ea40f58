package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// Runtime is one maker's runtime that can answer a vendor's API, with the
// facts that recognize it: NVIDIA's, and the CUDA-compatible runtimes that
// ship a libcuda.so.1 for another silicon (Iluvatar CoreX, ...). Every fact
// is one the machine states, never a guess: the PCI vendor id of the
// devices (sysfs, the strongest: it comes from the hardware), the real
// path and file of the library, the names its driver gives the devices.
type Runtime struct {
	Name        string   // "NVIDIA", "Iluvatar CoreX": what Properties.Vendor says
	PCIVendors  []uint16 // its accelerators' PCI vendor ids
	Paths       []string // substrings of the library's real path: "/corex/"
	Files       []string // prefixes of the library's real file name: "libxpucuda.so"
	DeviceNames []string // prefixes of the device names its driver reports: "Iluvatar "
	// Names are what the FlagOS projects call this maker (device
	// records carry them); zero where no FlagOS project names it.
	Names device.VendorNames
}

// Unknown is the maker of a runtime no fact identifies.
const Unknown = "unknown"

// WithMakers gives the backend the names of every PCI vendor id a
// registered vendor's accelerators have (flagshim passes the vendor
// registry's), so a device of another family's silicon behind this
// vendor's API is named for what it is. Without it only the vendor's own
// Runtimes name ids.
func WithMakers(byPCI map[uint16]string) Option { return func(o *options) { o.makers = byPCI } }

// WithSysRoot sets the folder under which /sys is read to learn the
// devices' PCI vendor ids (default "/"; FLAGOS_TEST_ROOT, for tests).
func WithSysRoot(root string) Option { return func(o *options) { o.sysroot = root } }

// identity is whose runtime answered, and the facts that say so.
type identity struct {
	maker    string   // the runtime's maker; Unknown when no fact says
	byDevice []string // each device's maker, in device order
	facts    []string
}

// identityState caches the exact tier's identity.
type identityState struct {
	once sync.Once
	id   identity
}

// identify says whose runtime answered from what the machine states: the
// devices' PCI vendor ids (read from sysfs by their bus ids), else the
// library's real path and file, else the names the driver gave the
// devices. A vendor whose API only its maker's runtime answers (no Shared
// flag) is its own maker when no fact says otherwise.
func (b *Backend) identify(libPath string, busIDs, names []string) identity {
	env := presence.NewEnv(presence.WithRoot(b.o.sysroot))
	id := identity{byDevice: make([]string, len(names))}
	real := libPath
	if libPath != "" {
		if r, err := filepath.EvalSymlinks(libPath); err == nil {
			real = r
		}
		if real != libPath {
			id.facts = append(id.facts, "library "+libPath+" is "+real)
		} else {
			id.facts = append(id.facts, "library "+libPath)
		}
	}
	byPath := ""
	for _, rt := range b.v.Runtimes {
		if real != "" && (containsAny(real, rt.Paths) || hasAnyPrefix(filepath.Base(real), rt.Files)) {
			byPath = rt.Name
			id.facts = append(id.facts, "its path is "+rt.Name+"'s")
			break
		}
	}
	var machine string // the one maker of the machine's accelerators, when sysfs says
	machineDone := false
	for i := range names {
		var bus string
		if i < len(busIDs) {
			bus = busIDs[i]
		}
		maker, fact := b.deviceMaker(env, bus, names[i])
		id.byDevice[i] = maker
		if fact != "" {
			id.facts = append(id.facts, fmt.Sprintf("device %d: %s", i, fact))
		}
		if maker == "" {
			if !machineDone {
				machineDone = true
				var fact string
				machine, fact = b.machineMaker(env)
				if fact != "" {
					id.facts = append(id.facts, fact)
				}
			}
			id.byDevice[i] = firstNonEmpty(machine, byPath)
		}
	}
	// One maker for the backend: the devices', when they agree.
	id.maker = byPath
	for i, m := range id.byDevice {
		if i == 0 {
			id.maker = m
		} else if m != id.maker {
			id.maker = "mixed"
		}
	}
	if id.maker == "" || (len(names) == 0 && byPath == "") {
		id.maker = b.fallbackMaker()
	}
	for i, m := range id.byDevice {
		if m == "" {
			id.byDevice[i] = b.fallbackMaker()
		}
	}
	return id
}

// deviceMaker names one device's maker: by its PCI vendor id where sysfs
// has it, else by the prefix of its name; "" when neither says.
func (b *Backend) deviceMaker(env *presence.Env, bus, name string) (maker, fact string) {
	if bdf := sysfsBDF(bus); bdf != "" {
		if s, err := env.ReadAttr("/sys/bus/pci/devices/" + bdf + "/vendor"); err == nil {
			if v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 16); err == nil {
				id := uint16(v)
				if n := b.makerOf(id); n != "" {
					return n, fmt.Sprintf("PCI vendor 0x%04x (%s) at %s", id, n, bdf)
				}
				return fmt.Sprintf("%s (PCI vendor 0x%04x)", Unknown, id), fmt.Sprintf("PCI vendor 0x%04x, which no registered vendor makes, at %s", id, bdf)
			}
		}
	}
	for _, rt := range b.v.Runtimes {
		if hasAnyPrefix(name, rt.DeviceNames) {
			return rt.Name, fmt.Sprintf("named %q, as %s's devices are", name, rt.Name)
		}
	}
	return "", ""
}

// machineMaker is the maker of every accelerator sysfs lists (PCI class
// 0x03, display, or 0x12, processing accelerator), when they are all one
// maker's: the fact for a device whose own bus id is not known (device
// nodes answered). A machine whose accelerators are not NVIDIA's has no
// NVIDIA GPU, whatever answers CUDA's API.
func (b *Backend) machineMaker(env *presence.Env) (maker, fact string) {
	ents, err := os.ReadDir(env.Path("/sys/bus/pci/devices"))
	if err != nil {
		return "", ""
	}
	ids := map[uint16]bool{}
	for _, e := range ents {
		dir := "/sys/bus/pci/devices/" + e.Name()
		class, err := env.ReadAttr(dir + "/class")
		if err != nil || !(strings.HasPrefix(class, "0x03") || strings.HasPrefix(class, "0x12")) {
			continue
		}
		s, err := env.ReadAttr(dir + "/vendor")
		if err != nil {
			continue
		}
		if v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 16); err == nil {
			ids[uint16(v)] = true
		}
		if len(ids) > 1 {
			return "", "sysfs lists accelerators of several PCI vendors"
		}
	}
	for id := range ids {
		n := b.makerOf(id)
		if n == "" {
			return "", fmt.Sprintf("sysfs lists accelerators of PCI vendor 0x%04x only, which no registered vendor makes", id)
		}
		return n, fmt.Sprintf("sysfs lists accelerators of PCI vendor 0x%04x (%s) only", id, n)
	}
	return "", ""
}

// makerOf names a PCI vendor id: the vendor's own Runtimes first, then
// WithMakers'; "" when neither knows it.
func (b *Backend) makerOf(id uint16) string {
	for _, rt := range b.v.Runtimes {
		for _, p := range rt.PCIVendors {
			if p == id {
				return rt.Name
			}
		}
	}
	return b.o.makers[id]
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// fallbackMaker is the maker when no fact says: the vendor itself where
// only its own runtime answers its API, else Unknown.
func (b *Backend) fallbackMaker() string {
	if b.v.Shared {
		return Unknown
	}
	return b.v.Name
}

// sysfsBDF turns a driver's PCI bus id ("00000000:18:00.0", CUDA's, or
// "0000:18:00.0") into sysfs's form: a 4-digit domain, lower case. "" when
// it is not one.
func sysfsBDF(bus string) string { return presence.PCIAddress(bus) }

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if x != "" && strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// exactIdentity is the exact tier's identity, learned once from the
// driver: each device's name and PCI bus id.
func (b *Backend) exactIdentity(s *state) identity {
	b.ident.once.Do(func() {
		names := make([]string, len(s.devs))
		buses := make([]string, len(s.devs))
		for i := range s.devs {
			d := &s.devs[i]
			names[i], _ = s.api.deviceName(d)
			if s.api.has(OpDevicePCIBusID) {
				buses[i], _ = s.api.devicePCIBusID(d)
			}
		}
		b.ident.id = b.identify(s.path, buses, names)
	})
	return b.ident.id
}
