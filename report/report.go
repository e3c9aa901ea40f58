package report

import (
	"fmt"
	"os"

	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// SchemaVersion is the "schema_version" of `flagshim info --json`, its first
// key (and of the CLI's other JSON outputs). Within a version keys are only
// ever added; a change that removes or redefines one increases it.
// docs/json.md documents every field. Version 2 says each fact once:
// attempts grouped by outcome, the probes that only repeat their backend
// and the unset variables left out, empty fields omitted, and a verdict.
const SchemaVersion = 2

// Info is what flagshim found on this machine and decided, gathered once
// after Init: what the CLI renders (info, list, explain), what the C
// library's flagshim_info_json marshals and what Python's flagshim.info()
// returns. Its JSON form is the output of `flagshim info --json`; keys are
// only ever added within a schema_version, and each one is documented in
// docs/json.md (a test checks both ways).
type Info struct {
	SchemaVersion int `json:"schema_version"`
	// Verdict is the answer in one line: the accelerators found (or "no
	// accelerator found"), what cuda means, and the tier that answered
	// with who chose it (Verdict).
	Verdict string    `json:"verdict"`
	Probe   tier.Tier `json:"probe"`
	// ProbeSource says who chose Probe: "--probe" (the host's own choice,
	// Options.ChosenTier), "FLAGOS_PROBE" or "default" (the host's default
	// tier, Options.DefaultTier); "" (omitted) where Probe is none of
	// these (Init ran earlier in the process, with options of its own).
	ProbeSource string    `json:"probe_source,omitempty"`
	Alias       Alias     `json:"alias"`
	Backends    []Backend `json:"backends"`
	// Probes are the probes that say more than their backend: redirected
	// ones, those of no backend, and those whose answer differs from their
	// backend's. A probe not listed answers what the backend of its name
	// does.
	Probes []Probe `json:"probes"`
	Phases []Phase `json:"phases"`
	// Env are the variables flagshim reads that are set (not empty), in the
	// order of flagshim.Variables; one not listed is unset.
	Env []Variable `json:"env"`
}

// Alias is the cuda->flagos decision (alias.Decision).
type Alias struct {
	Active bool        `json:"active"`
	From   device.Type `json:"from"`
	To     device.Type `json:"to"`
	Reason string      `json:"reason"`
}

// Backend is one registered backend: its probe, where it came from, its
// devices.
type Backend struct {
	Type          device.Type       `json:"type"`
	Available     bool              `json:"available"`
	Devices       int               `json:"devices"`
	Reason        string            `json:"reason"`
	Library       string            `json:"library,omitempty"`
	DriverVersion string            `json:"driver_version,omitempty"`
	RoutesTo      device.Type       `json:"routes_to,omitempty"`
	Vendor        string            `json:"vendor,omitempty"`       // whose runtime answered: "NVIDIA", "Iluvatar CoreX", "unknown"
	VendorFacts   []string          `json:"vendor_facts,omitempty"` // the facts that say so
	Tier          tier.Tier         `json:"tier,omitempty"`
	Attempts      []Attempt         `json:"attempts,omitempty"`
	Properties    []Device          `json:"properties,omitempty"`
	Extra         map[string]string `json:"extra,omitempty"` // the driver's own facts: symbols chosen, features missing, visible devices
	Error         string            `json:"error,omitempty"`
}

// Attempt is the library paths tried one after the other that had the same
// outcome: every soname of a library missing from the same folders is one
// Attempt, its error said once.
type Attempt struct {
	Paths []string `json:"paths"`
	Error string   `json:"error,omitempty"` // "" when the (last) path opened
}

// Tried is the number of paths the attempts tried.
func Tried(as []Attempt) int {
	n := 0
	for _, a := range as {
		n += len(a.Paths)
	}
	return n
}

// Device is one device of a backend.
type Device struct {
	Index           int    `json:"index"`
	Name            string `json:"name"`
	Vendor          string `json:"vendor"`
	UUID            string `json:"uuid"`
	TotalMemory     uint64 `json:"total_memory"`
	Major           int    `json:"major"`
	Minor           int    `json:"minor"`
	MultiProcessors int    `json:"multiprocessors"`
	PCIBusID        string `json:"pci_bus_id,omitempty"`
	FreeMemory      uint64 `json:"free_memory,omitempty"`
}

// pciBusIDer is implemented by the vendor drivers where the driver library
// can say where a device sits on the PCI bus.
type pciBusIDer interface {
	PCIBusID(index int) (string, error)
}

// memInfoer is implemented by backends that can say how much memory is free
// (the shape of device.Memory's MemInfo).
type memInfoer interface {
	MemInfo(index int) (free, total uint64, err error)
}

// tierer is implemented by the vendor backends of the driver core: which
// tier answered their probe.
type tierer interface {
	Tier() tier.Tier
}

// Result is a probe's answer.
type Result struct {
	Available bool   `json:"available"`
	Devices   int    `json:"devices"`
	Reason    string `json:"reason"`
}

// Probe is one named probe: its live and original answers and who
// redirected it.
type Probe struct {
	Name         string   `json:"name"`
	Live         Result   `json:"live"`
	Original     Result   `json:"original"`
	RedirectedBy []string `json:"redirected_by"`
}

// Phase is one step of Init's plan and how long it took.
type Phase struct {
	Name       string `json:"name"`
	Step       string `json:"step"`
	DurationNS int64  `json:"duration_ns"`
	Error      string `json:"error,omitempty"`
}

// Variable is one environment variable flagshim reads, set or not.
type Variable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Set   bool   `json:"set"`
}

// Options say what Collect asks.
type Options struct {
	// FreeMemory asks each device how much memory is free, where the
	// backend can tell without work of its own: in the presence and
	// isolated tiers the answer comes from the facts already gathered
	// (NVML, the isolated child) and no driver is initialized here. In the
	// exact tier it is not asked: learning it would create each device's
	// primary context (about 150 ms and some device memory per GPU on an
	// H200), which would more than double what `flagshim info` costs over
	// the driver's own init.
	FreeMemory bool
	// LookupEnv reads the variables reported (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Refer is the text that stands, in another answer, for a backend's
	// reason that the backend itself gives whole (see Collect); nil is
	// Pointer.
	Refer func(device.Type) string
	// ReferAttempts is the text that stands for an attempt's error where
	// the attempts of backend of give it whole: in the reason of backend
	// from, or in from's attempts (of != from) when they failed the same
	// way; nil is AttemptsPointer.
	ReferAttempts func(of, from device.Type) string
	// ChosenTier is the tier the host chose itself for this Init (the
	// CLI's --probe, flagshim.WithProbe); "" where it chose none.
	ChosenTier tier.Tier
	// DefaultTier is the host's default tier, where neither ChosenTier nor
	// FLAGOS_PROBE chooses (flagshim.WithDefaultProbe); "" is Go's, exact.
	DefaultTier tier.Tier
	// Host names the program whose default DefaultTier is, in the verdict
	// ("the default of the flagshim command"); "" says "the default".
	Host string
}

// Pointer is Options.Refer's default: "see backend cuda", that is the
// reason of the element of backends whose type is cuda.
func Pointer(t device.Type) string { return "see backend " + string(t) }

// ReferMin is the length, in runes, above which a backend's reason is
// given once, by the backend, and pointed to from everywhere else; shorter
// ones read better where they are (and could match text by chance).
const ReferMin = 48

// Collect gathers the report of rep's Init from device.Default and
// probe.Default.
func Collect(rep *flagshim.Report, o Options) Info {
	memory := o.FreeMemory && rep.Probe != tier.Exact
	lookupEnv := o.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	s := Info{
		SchemaVersion: SchemaVersion,
		Probe:         rep.Probe,
		ProbeSource:   probeSource(rep.Probe, o, lookupEnv),
		Alias: Alias{
			Active: rep.Alias.Active, From: rep.Alias.From, To: rep.Alias.To, Reason: rep.Alias.Reason,
		},
		Backends: []Backend{},
		Probes:   []Probe{},
		Phases:   []Phase{},
		Env:      []Variable{},
	}
	tiers := map[device.Type]tier.Tier{}
	for _, b := range device.Default.Backends() {
		be := describeBackend(b, memory)
		tiers[be.Type] = be.Tier
		s.Backends = append(s.Backends, be)
	}
	// flagos answers with the tier of the backend it routes to.
	for i, be := range s.Backends {
		if be.Tier == "" && be.RoutesTo != "" {
			s.Backends[i].Tier = tiers[be.RoutesTo]
		}
	}
	for _, name := range probe.Default.Names() {
		p := Probe{
			Name:         name,
			Live:         Result(probe.Default.Live(name)),
			Original:     Result(probe.Default.Original(name)),
			RedirectedBy: nonNil(probe.Default.RedirectedBy(name)),
		}
		if !s.repeatsBackend(p) {
			s.Probes = append(s.Probes, p)
		}
	}
	for _, r := range rep.Phases {
		p := Phase{Name: r.Phase, Step: r.Step, DurationNS: r.Duration.Nanoseconds()}
		if r.Err != nil {
			p.Error = r.Err.Error()
		}
		s.Phases = append(s.Phases, p)
	}
	s.ReferOnce(o.Refer)
	s.ReferAttemptsOnce(o.ReferAttempts)
	for _, x := range flagshim.Variables() {
		// Empty counts as unset, as it does for every variable flagshim reads.
		if v, _ := lookupEnv(x.Name); v != "" {
			s.Env = append(s.Env, Variable{Name: x.Name, Value: v, Set: true})
		}
	}
	s.Verdict = Verdict(s, o.Host)
	return s
}

func describeBackend(b device.Backend, memory bool) Backend {
	r := b.Available()
	out := Backend{
		Type: b.Type(), Available: r.Available, Devices: r.Devices, Reason: r.Reason,
	}
	if d, ok := b.(device.Describer); ok {
		info := d.Describe()
		out.Library, out.DriverVersion, out.RoutesTo = info.Library, info.DriverVersion, info.RoutesTo
		out.Vendor, out.VendorFacts = info.Vendor, info.VendorFacts
		out.Extra = info.Extra
		out.Attempts = groupAttempts(info.Attempts)
	}
	if t, ok := b.(tierer); ok {
		out.Tier = t.Tier()
	}
	out.Extra = ownExtra(out)
	if !r.Available {
		return out
	}
	for i := 0; i < r.Devices; i++ {
		p, err := b.Properties(i)
		if err != nil {
			out.Error = fmt.Sprintf("properties of device %d: %v", i, err)
			break
		}
		pj := Device{
			Index: i, Name: p.Name, Vendor: p.Vendor, UUID: p.UUID, TotalMemory: p.TotalMemory,
			Major: p.Major, Minor: p.Minor, MultiProcessors: p.MultiProcessors,
		}
		// A routing backend (flagos) forwards PCIBusID too; its devices are
		// the routed backend's, whose own lines show the bus id.
		if pci, ok := b.(pciBusIDer); ok && out.RoutesTo == "" {
			pj.PCIBusID, _ = pci.PCIBusID(i) // optional: "" where the driver lacks the symbol
		}
		if m, ok := b.(memInfoer); ok && memory {
			if free, _, err := m.MemInfo(i); err == nil {
				pj.FreeMemory = free // optional: 0 (left out) where the driver cannot tell
			}
		}
		out.Properties = append(out.Properties, pj)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
