package driver

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// WithVendorNames gives the backend what the FlagOS projects call every
// maker a registered vendor knows, by the maker's name ("NVIDIA",
// "Iluvatar CoreX": Vendor.Name and Runtime.Name); flagshim passes the
// vendor registry's. Without it only the vendor's own Names and its
// Runtimes' are known.
func WithVendorNames(byMaker map[string]device.VendorNames) Option {
	return func(o *options) { o.names = byMaker }
}

// pciState caches the sysfs scan of the vendor's accelerators: each read
// whole, by address, and its place in PCI order among those bound to its
// driver.
type pciState struct {
	once    sync.Once
	devs    []presence.PCIDevice
	at      map[string]int // address -> index in devs
	rank    []int          // by devs' index
	drivers map[string]int // driver -> how many devs it serves
}

// The fields of device.Record, by JSON key, for Unknown.
const (
	fieldName        = "name"
	fieldUUID        = "uuid"
	fieldPCI         = "pci_bus_id"
	fieldPCIDeviceID = "pci_device_id"
	fieldNUMA        = "numa_node"
	fieldLocalCPUs   = "local_cpus"
	fieldIndex       = "index"
	fieldVendor      = "vendor"
	fieldMemory      = "total_memory"
	fieldFree        = "free_memory"
	fieldReserved    = "reserved_memory"
	fieldCapability  = "major"
	fieldMPs         = "multiprocessors"
	fieldDriver      = "driver_version"
	fieldAPI         = "driver_api_version"
	fieldParent      = "parent"
)

// Record is device index's identity (-1: the current device), the same in
// every tier: what the tier answered (Properties, PCIBusID, the driver
// versions, free memory where the tier learned it without work) joined
// with what sysfs says of the device at that PCI address (NUMA node, local
// CPUs, PCI ids, the kernel driver's version, its place in PCI order),
// read under WithSysRoot's folder. Each field the tier cannot know is
// named in Unknown with the reason; facts two sources disagree on are in
// Conflicts. In the exact tier it initializes the driver; it never creates
// a context.
func (b *Backend) Record(index int) (device.Record, error) {
	f := b.facts()
	var err error
	if f != nil {
		index, err = b.factsDevice(f, index)
	} else {
		var d *devState
		if _, d, err = b.device(index); err == nil {
			index = int(d.ordinal)
		}
	}
	if err != nil {
		return device.Record{}, err
	}
	p, err := b.Properties(index)
	if err != nil {
		return device.Record{}, err
	}
	r := device.Record{
		Device: device.Device{Type: b.v.Type, Index: index}.String(), Type: b.v.Type, VisibleIndex: index,
		Index: -1, NUMANode: -1, Tier: string(b.Tier()), Usable: true, Unknown: map[string]string{},
		Maker: p.Vendor, Name: p.Name, UUID: p.UUID, TotalMemory: p.TotalMemory,
		Major: p.Major, Minor: p.Minor, MultiProcessors: p.MultiProcessors,
	}
	b.recordTier(&r, f, index)
	b.recordNames(&r)
	bus, busErr := b.PCIBusID(index)
	b.recordPCI(&r, bus, busErr, f)
	if f == nil {
		b.recordManagement(&r)
	}
	return r, nil
}

// source names who answered for Unknown's reasons: "the driver" (exact,
// isolated) or the presence source ("nvml", "device nodes").
func source(f *tier.Facts) string {
	if f == nil || f.Tier != tier.Presence {
		return "the driver"
	}
	if f.Source == "" {
		return "the presence tier's source"
	}
	return f.Source
}

// recordTier fills what only the tier knows: the versions, free memory,
// the source's index and parent, and the reasons for what it left out.
func (b *Backend) recordTier(r *device.Record, f *tier.Facts, i int) {
	src := source(f)
	missing := func(field, what string) {
		r.Unknown[field] = fmt.Sprintf("the %s tier's source (%s) does not give %s", r.Tier, src, what)
	}
	if r.Name == "" {
		missing(fieldName, "the device's name")
	}
	if r.UUID == "" {
		if f == nil && !b.v.binds(OpDeviceUUID) {
			r.Unknown[fieldUUID] = fmt.Sprintf("the %s driver API has no UUID function", b.v.Type)
		} else {
			missing(fieldUUID, "a UUID for it")
		}
	}
	if r.TotalMemory == 0 {
		missing(fieldMemory, "its memory")
	}
	if r.Major == 0 && r.Minor == 0 {
		missing(fieldCapability, "its compute capability (major, minor)")
	}
	if r.MultiProcessors == 0 {
		missing(fieldMPs, "its multiprocessor count")
	}
	switch {
	case f == nil: // exact, in this process
		if s := b.load(); s.version != 0 {
			r.DriverAPIVersion = b.v.FormatVersion(s.version)
		}
	case f.Tier == tier.Presence:
		r.DriverVersion = f.DriverVersion
		r.DriverAPIVersion = f.APIVersion
		if i < len(f.FreeMemory) {
			r.FreeMemory = f.FreeMemory[i]
		}
		if !recordReserved(r, f, i) {
			missing(fieldReserved, "the memory its driver and firmware reserve apart (total_memory is the source's total)")
		}
		if i < len(f.Indexes) {
			r.Index = f.Indexes[i]
		}
		if i < len(f.Parents) {
			r.Parent = f.Parents[i]
		}
	default: // the exact tier's answer from a child process (isolated)
		r.DriverAPIVersion = f.DriverVersion
		if i < len(f.FreeMemory) {
			r.FreeMemory = f.FreeMemory[i]
		}
		switch {
		case recordReserved(r, f, i):
		case f.Extra["isolated.free_memory"] != "":
			r.Unknown[fieldReserved] = f.Extra["isolated.free_memory"]
		case f.ReservedMemory == nil:
			r.Unknown[fieldReserved] = "the driver does not tell the memory its driver and firmware reserve (total_memory leaves it out); the isolated tier asks the management library for it only where memory is shown (flagshim query, info)"
		default:
			r.Unknown[fieldReserved] = "the management library did not tell it for this device (matched by UUID, else PCI address)"
		}
	}
	if r.DriverAPIVersion == "" {
		if f != nil && f.Tier == tier.Presence {
			r.Unknown[fieldAPI] = fmt.Sprintf("the presence tier does not open the %s driver library, and %s does not give its API version", b.v.Type, src)
		} else {
			r.Unknown[fieldAPI] = "the driver library did not report its version"
		}
	}
	if r.FreeMemory == 0 {
		if f == nil || f.Tier != tier.Presence {
			r.Unknown[fieldFree] = "the driver tells free memory only with the device's context created (MemInfo, which query and mem_get_info call); the presence tier reads it from the management library"
		} else {
			missing(fieldFree, "free memory")
		}
	}
	if f == nil || f.Tier != tier.Presence || f.Parents == nil {
		r.Unknown[fieldParent] = fmt.Sprintf("the %s tier's source (%s) does not say whether the device is a partition (a MIG instance) of another; the management library does (presence tier)", r.Tier, src)
	}
}

// recordReserved fills r's reserve from f's device i, if the tier
// learned it.
func recordReserved(r *device.Record, f *tier.Facts, i int) bool {
	if i >= len(f.ReservedMemory) || f.ReservedMemory[i] < 0 {
		return false
	}
	r.ReservedMemory = uint64(f.ReservedMemory[i])
	return true
}

// recordNames fills Vendor and VendorNames from the maker's name.
func (b *Backend) recordNames(r *device.Record) {
	if n, ok := b.namesOf(r.Maker); ok {
		r.VendorNames, r.Vendor = n, n.FlagOS
		return
	}
	r.Unknown[fieldVendor] = fmt.Sprintf("no fact names the maker in FlagOS's vocabulary (whose runtime answered: %q)", r.Maker)
}

// namesOf is what the FlagOS projects call maker.
func (b *Backend) namesOf(maker string) (device.VendorNames, bool) {
	if maker == "" {
		return device.VendorNames{}, false
	}
	if maker == b.v.Name && b.v.Names.FlagOS != "" {
		return b.v.Names, true
	}
	for _, rt := range b.v.Runtimes {
		if rt.Name == maker && rt.Names.FlagOS != "" {
			return rt.Names, true
		}
	}
	n, ok := b.o.names[maker]
	return n, ok && n.FlagOS != ""
}

// recordPCI fills the PCI address and what sysfs says of the device there.
func (b *Backend) recordPCI(r *device.Record, bus string, busErr error, f *tier.Facts) {
	addr := presence.PCIAddress(bus)
	if addr == "" {
		why := "the PCI address is not known"
		switch {
		case busErr != nil:
			r.Unknown[fieldPCI] = busErr.Error()
		case bus != "":
			r.Unknown[fieldPCI] = fmt.Sprintf("%q is not a PCI address", bus)
			r.Conflicts = append(r.Conflicts, fmt.Sprintf("%s: %s gave %q, which is not a PCI address", fieldPCI, source(f), bus))
		default:
			r.Unknown[fieldPCI] = "no PCI address was given"
		}
		for _, k := range []string{fieldNUMA, fieldLocalCPUs, fieldPCIDeviceID} {
			r.Unknown[k] = why
		}
		if r.Index < 0 {
			r.Unknown[fieldIndex] = why + ", so its place in PCI order is not either"
		}
		if r.DriverVersion == "" {
			r.Unknown[fieldDriver] = why + ", so the kernel driver serving it is not either"
		}
		return
	}
	r.PCIBusID = addr
	env := presence.NewEnv(presence.WithRoot(b.o.sysroot))
	ps := b.pciScan(env)
	d, err := presence.PCIDevice{}, error(nil)
	if i, ok := ps.at[addr]; ok {
		d = ps.devs[i]
	} else {
		d, err = env.PCIDevice(addr)
	}
	if err != nil {
		why := fmt.Sprintf("sysfs lists no PCI device at %s (%s)", addr, pathErr(err))
		for _, k := range []string{fieldNUMA, fieldLocalCPUs, fieldPCIDeviceID} {
			r.Unknown[k] = why
		}
		if r.Index < 0 {
			r.Unknown[fieldIndex] = why
		}
		if r.DriverVersion == "" {
			r.Unknown[fieldDriver] = why
		}
		return
	}
	r.NUMANode, r.LocalCPUs = d.NUMANode, d.LocalCPUs
	r.PCIDeviceID = uint32(d.Device)<<16 | uint32(d.Vendor)
	if d.LocalCPUs == "" {
		r.Unknown[fieldLocalCPUs] = "sysfs gives no local_cpulist for " + addr
	}
	if !b.pciMaker(d.Vendor) {
		r.Conflicts = append(r.Conflicts, fmt.Sprintf("%s: %s places the device at %s, where sysfs lists a device of PCI vendor 0x%04x, which no registered vendor makes",
			fieldPCI, source(f), addr, d.Vendor))
	}
	switch {
	case d.DriverVersion != "" && r.DriverVersion == "":
		r.DriverVersion = d.DriverVersion
	case d.DriverVersion != "" && d.DriverVersion != r.DriverVersion:
		r.Conflicts = append(r.Conflicts, fmt.Sprintf("%s: %s says %s, the kernel module %s %s", fieldDriver, source(f), r.DriverVersion, d.Driver, d.DriverVersion))
	case r.DriverVersion == "":
		r.Unknown[fieldDriver] = fmt.Sprintf("the kernel driver serving %s (%q) gives no version in sysfs, and the %s tier's source does not", addr, d.Driver, r.Tier)
	}
	rank, n := ps.rankOf(addr)
	switch {
	case rank < 0:
		if r.Index < 0 {
			r.Unknown[fieldIndex] = fmt.Sprintf("sysfs lists %s, but not as an accelerator of this vendor's makers", addr)
		}
	case r.Index < 0:
		r.Index = rank
	case r.Index != rank && r.Parent == "":
		r.Conflicts = append(r.Conflicts, fmt.Sprintf("%s: %s numbers it %d; its place in PCI order among the %d accelerators sysfs lists with its driver is %d (a container that holds some of the machine's devices?)",
			fieldIndex, source(f), r.Index, n, rank))
	}
}

// pciMaker reports whether a registered vendor makes devices of PCI
// vendor id.
func (b *Backend) pciMaker(id uint16) bool {
	return slices.Contains(b.v.PCIVendors, id) || b.makerOf(id) != ""
}

// pciIDs are the PCI vendor ids of the vendor's accelerators and of the
// runtimes that answer its API.
func (b *Backend) pciIDs() []uint16 {
	ids := slices.Clone(b.v.PCIVendors)
	for _, rt := range b.v.Runtimes {
		ids = append(ids, rt.PCIVendors...)
	}
	return ids
}

// pciScan is the sysfs scan of the accelerators of pciIDs, once.
func (b *Backend) pciScan(env *presence.Env) *pciState {
	ps := &b.pci
	ps.once.Do(func() {
		ps.devs = env.PCIAccelerators(b.pciIDs(), device.MaxDevices)
		ps.at = make(map[string]int, len(ps.devs))
		ps.rank = make([]int, len(ps.devs))
		ps.drivers = map[string]int{}
		for i, d := range ps.devs {
			ps.at[d.Address] = i
			ps.rank[i] = ps.drivers[d.Driver]
			ps.drivers[d.Driver]++
		}
	})
	return ps
}

// rankOf is addr's place in PCI address order among the accelerators of
// the vendor's makers bound to the same kernel driver, and how many there
// are; -1 when the scan does not hold addr.
func (ps *pciState) rankOf(addr string) (rank, n int) {
	i, ok := ps.at[addr]
	if !ok {
		return -1, 0
	}
	return ps.rank[i], ps.drivers[ps.devs[i].Driver]
}

// Unusable lists the accelerators of the vendor's own PCI vendor ids that
// sysfs shows while the backend is not available (its driver or management
// library fails, or the visible-devices variable hides them): each a
// record with Usable false, no device string (VisibleIndex -1), the
// backend's reason, its PCI facts and its place in PCI order among the
// devices bound to the same kernel driver (none, for a driver that is not
// loaded). Empty while the backend is available or sysfs shows none.
func (b *Backend) Unusable() []device.Record {
	res := b.Available()
	if res.Available {
		return nil
	}
	env := presence.NewEnv(presence.WithRoot(b.o.sysroot))
	var own []presence.PCIDevice
	for _, d := range b.pciScan(env).devs {
		if slices.Contains(b.v.PCIVendors, d.Vendor) {
			own = append(own, d)
		}
	}
	if len(own) == 0 {
		return nil
	}
	reason := res.Reason
	if k, v := b.v.visible(b.o.getenv); k != "" {
		reason += "; " + k + "=" + v + " is set, which may hide them"
	}
	t := b.Tier()
	out := make([]device.Record, 0, len(own))
	ranks := map[string]int{}
	for _, d := range own {
		x := d
		r := device.Record{
			Type: b.v.Type, VisibleIndex: -1, Index: ranks[x.Driver], PCIBusID: x.Address, NUMANode: d.NUMANode, LocalCPUs: d.LocalCPUs,
			PCIDeviceID: uint32(d.Device)<<16 | uint32(d.Vendor), DriverVersion: d.DriverVersion, Tier: string(t),
			Reason: reason, Unknown: map[string]string{},
		}
		ranks[x.Driver]++
		r.Maker = b.makerOf(d.Vendor)
		if r.Maker == "" {
			r.Maker = b.v.Name
		}
		b.recordNames(&r)
		why := fmt.Sprintf("the %s backend is not available: only sysfs describes the device", b.v.Type)
		for _, k := range []string{fieldName, fieldUUID, fieldMemory, fieldReserved, fieldFree, fieldCapability, fieldMPs, fieldAPI, fieldParent} {
			r.Unknown[k] = why
		}
		if r.DriverVersion == "" {
			r.Unknown[fieldDriver] = fmt.Sprintf("no kernel driver with a version serves %s (driver %q)", x.Address, x.Driver)
		}
		out = append(out, r)
	}
	return out
}

// pathErr is err without the root's path: "no such file or directory".
func pathErr(err error) string {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap().Error()
	}
	return err.Error()
}
