package cli

import (
	"fmt"

	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// SchemaVersion is the "schema_version" of `flagshim info --json`, its first
// key. Keys are only ever added; a change that removes or redefines one
// would increase it. docs/json.md documents every field.
const SchemaVersion = 1

// snapshot is everything the CLI shows, gathered once after Init. Its JSON
// form is the output of `flagshim info --json`; keys are only ever added,
// and each one is documented in docs/json.md (a test checks both ways).
type snapshot struct {
	SchemaVersion int           `json:"schema_version"`
	Probe         tier.Tier     `json:"probe"`
	Alias         aliasJSON     `json:"alias"`
	Backends      []backendJSON `json:"backends"`
	Probes        []probeJSON   `json:"probes"`
	Phases        []phaseJSON   `json:"phases"`
	Env           []envJSON     `json:"env"`
}

type aliasJSON struct {
	Active bool        `json:"active"`
	From   device.Type `json:"from"`
	To     device.Type `json:"to"`
	Reason string      `json:"reason"`
}

type backendJSON struct {
	Type          device.Type       `json:"type"`
	Available     bool              `json:"available"`
	Devices       int               `json:"devices"`
	Reason        string            `json:"reason"`
	Library       string            `json:"library"`
	DriverVersion string            `json:"driver_version"`
	RoutesTo      device.Type       `json:"routes_to,omitempty"`
	Tier          tier.Tier         `json:"tier,omitempty"`
	Attempts      []attemptJSON     `json:"attempts"`
	Properties    []propsJSON       `json:"properties"`
	Extra         map[string]string `json:"extra,omitempty"` // the driver's own facts: symbols chosen, features missing, visible devices
	Error         string            `json:"error,omitempty"`
}

type attemptJSON struct {
	Path  string `json:"path"`
	Error string `json:"error,omitempty"`
}

type propsJSON struct {
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

type resultJSON struct {
	Available bool   `json:"available"`
	Devices   int    `json:"devices"`
	Reason    string `json:"reason"`
}

type probeJSON struct {
	Name         string     `json:"name"`
	Live         resultJSON `json:"live"`
	Original     resultJSON `json:"original"`
	RedirectedBy []string   `json:"redirected_by"`
}

type phaseJSON struct {
	Name       string `json:"name"`
	Step       string `json:"step"`
	DurationNS int64  `json:"duration_ns"`
	Error      string `json:"error"`
}

type envJSON struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Set   bool   `json:"set"`
}

// EnvVars are the variables that change what flagshim does, in the order
// the CLI reports them (info --json's "env", explain's "Environment"). It is
// the one list of them: README.md's environment table and docs/json.md
// carry each one (a test checks). The meaning of each is in README.md.
var EnvVars = []string{
	alias.EnvVar, "FLAGOS_BACKEND",
	"FLAGOS_PROBE", "FLAGOS_PROBE_TIMEOUT",
	"FLAGOS_LIBCUDA_PATH", "FLAGOS_LIBMUSA_PATH", "FLAGOS_LIBHIP_PATH",
	"FLAGOS_LIBNVML_PATH", "FLAGOS_LIBMTML_PATH", "FLAGOS_LIBNVSHMEM_PATH",
	"FLAGOS_LOG",
	"CUDA_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
}

// collect gathers the snapshot. memory asks each device how much memory is
// free, where the backend can tell without work of its own: in the presence
// and isolated tiers the answer comes from the facts already gathered (NVML,
// the isolated child) and no driver is initialized here. In the exact tier
// it is not asked: learning it would create each device's primary context
// (about 150 ms and some device memory per GPU on an H200), which would
// more than double what `flagshim info` costs over the driver's own init.
func collect(rep *flagshim.Report, memory bool) snapshot {
	memory = memory && rep.Probe != tier.Exact
	s := snapshot{
		SchemaVersion: SchemaVersion,
		Probe:         rep.Probe,
		Alias: aliasJSON{
			Active: rep.Alias.Active, From: rep.Alias.From, To: rep.Alias.To, Reason: rep.Alias.Reason,
		},
		Backends: []backendJSON{},
		Probes:   []probeJSON{},
		Phases:   []phaseJSON{},
		Env:      []envJSON{},
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
		s.Probes = append(s.Probes, probeJSON{
			Name:         name,
			Live:         resultJSON(probe.Default.Live(name)),
			Original:     resultJSON(probe.Default.Original(name)),
			RedirectedBy: nonNil(probe.Default.RedirectedBy(name)),
		})
	}
	for _, r := range rep.Phases {
		p := phaseJSON{Name: r.Phase, Step: r.Step, DurationNS: r.Duration.Nanoseconds()}
		if r.Err != nil {
			p.Error = r.Err.Error()
		}
		s.Phases = append(s.Phases, p)
	}
	for _, name := range EnvVars {
		// Empty counts as unset, as it does for every variable flagshim reads.
		v, _ := lookupEnv(name)
		s.Env = append(s.Env, envJSON{Name: name, Value: v, Set: v != ""})
	}
	return s
}

func describeBackend(b device.Backend, memory bool) backendJSON {
	r := b.Available()
	out := backendJSON{
		Type: b.Type(), Available: r.Available, Devices: r.Devices, Reason: r.Reason,
		Attempts: []attemptJSON{}, Properties: []propsJSON{},
	}
	if d, ok := b.(device.Describer); ok {
		info := d.Describe()
		out.Library, out.DriverVersion, out.RoutesTo = info.Library, info.DriverVersion, info.RoutesTo
		out.Extra = info.Extra
		for _, a := range info.Attempts {
			out.Attempts = append(out.Attempts, attemptJSON(a))
		}
	}
	if t, ok := b.(tierer); ok {
		out.Tier = t.Tier()
	}
	if !r.Available {
		return out
	}
	for i := 0; i < r.Devices; i++ {
		p, err := b.Properties(i)
		if err != nil {
			out.Error = fmt.Sprintf("properties of device %d: %v", i, err)
			break
		}
		pj := propsJSON{
			Index: i, Name: p.Name, Vendor: p.Vendor, UUID: p.UUID, TotalMemory: p.TotalMemory,
			Major: p.Major, Minor: p.Minor, MultiProcessors: p.MultiProcessors,
		}
		if pci, ok := b.(pciBusIDer); ok {
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
