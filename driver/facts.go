package driver

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim/device"
)

// WithFacts makes the backend answer Available, DeviceCount, Properties,
// PCIBusID, DriverVersion, Describe and (until the driver is initialized)
// MemInfo from f (called once, on first
// use) instead of initializing the driver. Everything that needs a context
// (Synchronize, memory, modules, streams, WithContext) still initializes
// the driver in this process, lazily; if that fails, its error says what f
// had answered and how to select the exact tier. SetCurrent and Current need
// no driver. f gets the backend, to read what opening the library says
// (LibraryInfo) without initializing it.
func WithFacts(f func(b *Backend) tier.Facts) Option { return func(o *options) { o.facts = f } }

// factsState is the cached answer of WithFacts.
type factsState struct {
	once sync.Once
	f    tier.Facts
}

// facts is the answer of the facts tier, or nil in the exact tier.
func (b *Backend) facts() *tier.Facts {
	if b.o.facts == nil {
		return nil
	}
	b.fs.once.Do(func() {
		b.fs.f = b.o.facts(b)
		if b.fs.f.Tier == "" {
			b.fs.f.Tier = tier.Presence
		}
		if !b.fs.f.Result.Available {
			b.fs.f.Result.Devices = 0
		}
	})
	return &b.fs.f
}

// Tier is where the backend's probe answer comes from.
func (b *Backend) Tier() tier.Tier {
	if f := b.facts(); f != nil {
		return f.Tier
	}
	return tier.Exact
}

// LibraryInfo is what opening the driver library says, without
// initializing the driver: the path, the driver version (0 unknown), every
// attempt, and why it could not be opened.
type LibraryInfo struct {
	Path     string
	Version  int
	Attempts []device.Attempt
	Err      error
	Reason   string
	// NoDevice says why the exact tier would not load a library that is
	// found: the vendor's device nodes are missing here (Library.Nodes,
	// the override variable unset), so its driver could only find no
	// device. "" when it would load it.
	NoDevice string
}

// LibraryInfo opens the library (once, shared with the exact load) and
// reports it. It never initializes the driver.
func (b *Backend) LibraryInfo() LibraryInfo {
	ls := b.library()
	return LibraryInfo{Path: ls.path, Version: ls.version, Attempts: attempts(ls.attempts), Err: ls.err, Reason: ls.reason}
}

// FindLibrary runs the library search and its checks without opening
// anything (no code of the library runs): where the library is, every
// attempt, and why there is none. Version is 0: reading it needs the
// library opened (LibraryInfo).
func (b *Backend) FindLibrary() LibraryInfo {
	path, as, err := b.find()
	info := LibraryInfo{Path: path, Attempts: attempts(as), Err: err}
	if err != nil {
		info.Reason = fmt.Sprintf("%s: %v", b.v.Type, err)
	} else if skipped, ok := b.withoutNodes(); ok {
		info.NoDevice = skipped.reason
	}
	return info
}

// factsDevice checks index against the facts' devices (-1: current).
func (b *Backend) factsDevice(f *tier.Facts, index int) (int, error) {
	if !f.Result.Available {
		return 0, fmt.Errorf("%w: %s", device.ErrNotAvailable, f.Result.Reason)
	}
	if index == -1 {
		index = int(b.cur.Load())
	}
	if index < 0 || index >= len(f.Devices) {
		if len(f.Devices) == 0 {
			return 0, fmt.Errorf("%w: %s:%d: there are no devices", device.ErrInvalidIndex, b.v.Type, index)
		}
		return 0, fmt.Errorf("%w: %s:%d is out of range: valid indexes are 0..%d (%d devices), or -1 for the current device",
			device.ErrInvalidIndex, b.v.Type, index, len(f.Devices)-1, len(f.Devices))
	}
	return index, nil
}

// exactErr is the error of a call that needed the driver in this process
// when the facts tier answered and the driver could not be initialized.
func (b *Backend) exactErr(f *tier.Facts, err error) error {
	return fmt.Errorf("%w; the %s tier had answered %q; set FLAGOS_PROBE=exact to probe by initializing the driver in this process",
		err, f.Tier, f.Result.Reason)
}

// describeFacts is Describe in the facts tier.
func (b *Backend) describeFacts(f *tier.Facts) device.Info {
	info := device.Info{Library: f.Library, DriverVersion: f.DriverVersion, Attempts: f.Attempts, Extra: map[string]string{},
		Vendor: f.Vendor, VendorFacts: f.VendorFacts}
	for k, v := range f.Extra {
		info.Extra[k] = v
	}
	info.Extra["tier"] = string(f.Tier)
	info.Extra["available"] = strconv.FormatBool(f.Result.Available)
	info.Extra["reason"] = f.Result.Reason
	info.Extra["devices"] = strconv.Itoa(len(f.Devices))
	for _, k := range b.v.VisibleEnv {
		if val := b.o.getenv(k); val != "" {
			info.Extra[k] = val
		}
	}
	if s := b.st.Load(); s != nil {
		info.Extra["exact.available"] = strconv.FormatBool(s.err == nil)
		info.Extra["exact.reason"] = s.result.Reason
	}
	return info
}

// ExactFacts initializes the driver in this process and reports what the
// exact tier knows as Facts (tier exact): what an isolated probe's child
// sends to its parent. With freeMemory it also learns each device's free
// memory, which creates the device's primary context (about 150 ms a GPU
// on an H200).
func (b *Backend) ExactFacts(freeMemory bool) tier.Facts { return b.factsOf(b.load(), freeMemory) }

// FactsWithoutLoading is ExactFacts where it is known without running any
// code of the library: the search finds no library (or its checks refuse
// every candidate), or the vendor's device nodes are missing so the
// library would not be loaded (Library.Nodes). ok is false when the exact
// tier would open a library: only loading it can tell. It opens nothing
// and does not load the backend; the isolated tier asks it first, so that
// a vendor that is not here costs no child process.
func (b *Backend) FactsWithoutLoading() (f tier.Facts, ok bool) {
	ls, ok := b.dryLibrary()
	if !ok {
		return tier.Facts{}, false
	}
	return b.factsOf(b.unloaded(ls), false), true
}

// factsOf reports s as Facts (tier exact).
func (b *Backend) factsOf(s *state, freeMemory bool) tier.Facts {
	f := tier.Facts{Tier: tier.Exact, Result: s.result, Library: s.path, Attempts: attempts(s.attempts), Extra: map[string]string{}}
	if s.version != 0 {
		f.DriverVersion = b.v.FormatVersion(s.version)
	}
	ex := b.describeExact(s)
	for k, v := range ex.Extra {
		f.Extra[k] = v
	}
	f.Vendor, f.VendorFacts = ex.Vendor, ex.VendorFacts
	for i := range s.devs {
		p, err := b.Properties(i)
		if err != nil {
			f.Extra[fmt.Sprintf("error.properties.%d", i)] = err.Error()
		}
		f.Devices = append(f.Devices, p)
		id, _ := b.PCIBusID(i)
		f.PCIBusIDs = append(f.PCIBusIDs, id)
		var free uint64
		if freeMemory {
			free, _, _ = b.MemInfo(i)
		}
		f.FreeMemory = append(f.FreeMemory, free)
	}
	return f
}
