package device

// Record is one device's identity: what the device is and where it sits,
// the same whichever probe tier answered (exact, presence, isolated). A
// field a tier cannot know is left at its zero value (or -1 where the
// comment says) and named in Unknown with the reason, so that a reader
// never takes "unknown" for "none". Its JSON keys are fixed: `flagshim
// list --json` carries records, `flagshim query` reads its columns from
// them, the C library's flagshim_device_json writes one.
type Record struct {
	// Device is the device string that names it here ("cuda:0"); "" for
	// a device no device string names (present but unusable).
	Device string `json:"device"`
	// Type is the backend's device type: the vendor backend that serves
	// it (cuda, musa, ...), never the flagos alias.
	Type Type `json:"type"`
	// VisibleIndex is what a device string of Type names (cuda:N): its
	// place in the runtime's order, after the visible-devices variable;
	// -1 for a device no device string names.
	VisibleIndex int `json:"visible_index"`
	// Index is its physical index as the vendor's tool numbers it
	// (nvidia-smi's index): the management library's own index where the
	// tier read one, else its place in PCI address order among the
	// accelerators of its maker that its kernel driver serves (sysfs); -1
	// when neither is known. A partition has its parent's.
	Index int `json:"index"`
	// Vendor is the maker in FlagOS's one vocabulary ("nvidia",
	// "mthreads", "amd", ...), VendorNames what each FlagOS project calls
	// it; "" when no fact names the maker.
	Vendor      string      `json:"vendor"`
	VendorNames VendorNames `json:"vendor_names"`
	// Maker is whose runtime answered, in words ("NVIDIA", "Iluvatar
	// CoreX"): Properties.Vendor.
	Maker string `json:"maker"`
	Name  string `json:"name"`
	// UUID is in the vendor's own form ("GPU-8a1f...", "MIG-...").
	UUID string `json:"uuid"`
	// PCIBusID is the PCI address in sysfs's form, lower case with a
	// 4-digit domain: "0000:18:00.0".
	PCIBusID string `json:"pci_bus_id"`
	// PCIDeviceID is the PCI device and vendor ids as nvidia-smi's
	// pci.device_id gives them (device << 16 | vendor: 0x233010de), from
	// sysfs; 0 unknown.
	PCIDeviceID uint32 `json:"pci_device_id"`
	// NUMANode is the NUMA node sysfs gives the device; -1 when the
	// platform gives none (or it is unknown: see Unknown).
	NUMANode int `json:"numa_node"`
	// LocalCPUs are the CPUs close to the device, as sysfs's
	// local_cpulist gives them ("0-47,96-143").
	LocalCPUs string `json:"local_cpus"`
	// TotalMemory is the memory the runtime can allocate, in bytes: the
	// driver's total (cuDeviceTotalMem, torch's total_memory) in every
	// tier; the presence tier gives the management library's total less
	// ReservedMemory.
	TotalMemory uint64 `json:"total_memory"`
	// ReservedMemory is what the driver and firmware reserve, in bytes,
	// which TotalMemory leaves out: TotalMemory + ReservedMemory is the
	// device's whole memory, nvidia-smi's memory.total. A management
	// library tells it (NVML's nvmlDeviceGetMemoryInfo_v2); see Unknown
	// where none did.
	ReservedMemory uint64 `json:"reserved_memory"`
	// FreeMemory is the free memory in bytes when the record was made,
	// where the tier learned it without work of its own (see Unknown).
	FreeMemory uint64 `json:"free_memory"`
	// Major and Minor are the compute capability (or the architecture's
	// major and minor: gfx 9.4 on AMD); 0.0 unknown.
	Major           int `json:"major"`
	Minor           int `json:"minor"`
	MultiProcessors int `json:"multiprocessors"`
	// DriverVersion is the kernel driver's version, as nvidia-smi's
	// driver_version gives it ("580.95.05"); DriverAPIVersion the driver
	// library's API version ("13.0").
	DriverVersion    string `json:"driver_version"`
	DriverAPIVersion string `json:"driver_api_version"`
	// Parent is the UUID of the device a partition (a MIG instance) is
	// carved from; "" for a whole device.
	Parent string `json:"parent"`
	// Tier is the probe tier that answered: "exact", "presence",
	// "isolated".
	Tier string `json:"tier"`
	// Usable says whether a device string can use it now; Reason says why
	// not (the driver's or the management library's error).
	Usable bool   `json:"usable"`
	Reason string `json:"reason,omitempty"`
	// Unknown names each field (by its JSON key) this tier could not
	// learn, with the reason.
	Unknown map[string]string `json:"unknown,omitempty"`
	// Conflicts are the facts two sources disagree on, one sentence each
	// ("pci_bus_id: the driver places it at 0000:18:00.0, where sysfs
	// lists a device of PCI vendor 0x8086").
	Conflicts []string `json:"conflicts,omitempty"`
}

// VendorNames are what the FlagOS projects call one maker: flagshim's
// vendor name (FlagOS's vocabulary, FlagGems's vendor_name) and the names
// FlagGems, FlagCX and FlagTree use, each from the project's public
// sources (the vendor packages cite them).
type VendorNames struct {
	FlagOS   string `json:"flagos"`   // "nvidia"
	FlagGems string `json:"flaggems"` // its backend folder and vendor_name: "nvidia"
	FlagCX   string `json:"flagcx"`   // its device adaptor's name: "CUDA"
	FlagTree string `json:"flagtree"` // FLAGTREE_BACKEND: "nvidia"
}

// Identifier is implemented by backends that give each device's Record:
// the vendor backends of the driver core, and flagos, which forwards to
// the backend it routes to.
type Identifier interface {
	// Record is device index's record (-1: the current device); an index
	// out of range is an error matching ErrInvalidIndex.
	Record(index int) (Record, error)
	// Unusable lists the devices the machine holds (its PCI devices of
	// the backend's makers) that the backend cannot use because its
	// driver or management library fails: records with Usable false,
	// VisibleIndex -1 and the Reason. Empty while the backend is
	// available.
	Unusable() []Record
}

// IdentifierOf returns b's Identifier, or an error matching
// ErrNotSupported that names the backend when it has none.
func IdentifierOf(b Backend) (Identifier, error) {
	if id, ok := b.(Identifier); ok {
		return id, nil
	}
	return nil, lacks(b, "device records (device.Identifier)")
}
