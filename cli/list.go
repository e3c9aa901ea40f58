package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// exitNoDevice is list --accelerators-only's status where no accelerator
// is found: nvidia-smi -L's where it finds no GPU (6, NVML_ERROR_NOT_FOUND:
// "No devices were found"), so that a script's "is there one?" reads the
// same.
const exitNoDevice = 6

// listOptions are list's flags.
type listOptions struct {
	json             bool // --json
	acceleratorsOnly bool // --accelerators-only
}

// listed is one line of list, and one object of list --json.
type listed struct {
	Device   string      `json:"device"`
	Type     device.Type `json:"type"`
	Index    int         `json:"index"`
	Name     string      `json:"name"`
	UUID     string      `json:"uuid"`
	RoutesTo string      `json:"routes_to,omitempty"`
	// Record is the device's record (--json only; docs/identity.md), for
	// the devices of a backend that gives records (not cpu).
	Record *device.Record `json:"record,omitempty"`
}

// listOutput is list --json's object (docs/json.md).
type listOutput struct {
	SchemaVersion int      `json:"schema_version"`
	Devices       []listed `json:"devices"`
	// Unusable are the accelerators present but unusable (their driver
	// or management library fails), as records.
	Unusable []*device.Record `json:"unusable"`
}

// list prints one line per device, as nvidia-smi -L does: cpu:0 first, the
// vendor backends' devices, then flagos's with the vendor device each one
// routes to. With --accelerators-only, the vendor backends' devices alone,
// and exitNoDevice when there is none.
//
// Its default tier is presence, as nvidia-smi -L's answers come from the
// management library (NVML): a vendor whose library is there but whose
// management library and device nodes show nothing is asked in an
// isolated child instead (flagshim.WithIsolatedFallback), so list answers
// at the management library's speed where it can and exactly where it
// cannot, never initializing a driver in the CLI itself.
func list(s *session, o listOptions) int {
	s.listDefaults()
	if o.json {
		// The records' free memory and reserve from the management
		// library in every tier, as query has them.
		s.opts = append(s.opts, flagshim.WithFreeMemory())
	}
	s.showsEveryBackend()
	if _, _, bad := s.initialise(); bad != nil {
		return fail(s.stderr, bad)
	}
	// As for resolve, other errors of Init are not errors of list, but an
	// undecided alias is: device.Default then refuses to answer.
	if _, err := device.Lookup(device.CPU); err != nil {
		return fail(s.stderr, err)
	}
	var cpu, vendors, flagos []device.Backend
	for _, b := range device.Default.Backends() {
		switch b.Type() {
		case device.CPU:
			cpu = append(cpu, b)
		case device.FlagOS:
			flagos = append(flagos, b)
		default:
			vendors = append(vendors, b)
		}
	}
	groups := [][]device.Backend{cpu, vendors, flagos}
	if o.acceleratorsOnly {
		groups = [][]device.Backend{vendors}
	}
	devs := []listed{}
	var errs []error
	accelerators := 0
	for _, group := range groups {
		for _, be := range group {
			n, lines, err := listBackend(be, o.json)
			devs = append(devs, lines...)
			errs = append(errs, err)
			if be.Type() != device.CPU {
				accelerators += n
			}
		}
	}
	inv := takeInventory(false, false)
	var outErr error
	if o.json {
		out := listOutput{report.SchemaVersion, devs, []*device.Record{}}
		for i := range inv.unusable {
			out.Unusable = append(out.Unusable, &inv.unusable[i])
		}
		outErr = writeJSON(s.stdout, out)
	} else {
		var b strings.Builder
		for _, d := range devs {
			b.WriteString(listLine(d))
			b.WriteByte('\n')
		}
		if !o.acceleratorsOnly { // its lines are the usable accelerators, one each
			for _, r := range inv.unusable {
				b.WriteString(unusableLine(r))
				b.WriteByte('\n')
			}
		}
		_, outErr = fmt.Fprint(s.stdout, b.String())
	}
	inv.note(s.stderr)
	if accelerators == 0 && len(inv.unusable) == 0 {
		fmt.Fprintf(s.stderr, "%sno accelerator found (`flagshim explain` says what was tried)\n", prefix)
	}
	code := s.done(outErr, errors.Join(errs...))
	if code == exitOK && accelerators == 0 && o.acceleratorsOnly {
		if len(inv.unusable) > 0 {
			return exitUnusable
		}
		return exitNoDevice
	}
	return code
}

// unusableLine is "cuda: unusable: 0000:18:00.0 (nvidia, PCI 0x233010DE)":
// a device present that no device string names; stderr says why.
func unusableLine(r device.Record) string {
	line := string(r.Type) + ": unusable: " + r.PCIBusID
	var facts []string
	if r.Vendor != "" {
		facts = append(facts, r.Vendor)
	}
	if r.PCIDeviceID != 0 {
		facts = append(facts, fmt.Sprintf("PCI 0x%08X", r.PCIDeviceID))
	}
	if len(facts) > 0 {
		line += " (" + strings.Join(facts, ", ") + ")"
	}
	return escape(line)
}

// listBackend returns one backend's devices and how many there are. A
// backend that is not available has none.
func listBackend(b device.Backend, records bool) (n int, devs []listed, err error) {
	r := b.Available()
	if !r.Available {
		return 0, nil, nil
	}
	routesTo := device.Type("")
	if d, ok := b.(device.Describer); ok {
		routesTo = d.Describe().RoutesTo
	}
	var errs []error
	for i := 0; i < r.Devices; i++ {
		id := device.Device{Type: b.Type(), Index: i}
		p, err := b.Properties(i)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: cannot read its properties: %w", id, err))
			continue
		}
		d := listEntry(id, p, routesTo)
		if ident, ok := b.(device.Identifier); ok && records {
			rec, err := ident.Record(i)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: cannot read its record: %w", id, err))
			} else {
				d.Record = &rec
			}
		}
		devs = append(devs, d)
	}
	return r.Devices, devs, errors.Join(errs...)
}

// listEntry is one device of list. A device that routes to another names
// it in RoutesTo, and the router's own " (cuda:0)" at the end of its name
// is left out: the arrow of the line says it.
func listEntry(id device.Device, p device.Properties, routesTo device.Type) listed {
	d := listed{Device: id.String(), Type: id.Type, Index: id.Index, Name: p.Name, UUID: p.UUID}
	if routesTo != "" {
		d.RoutesTo = device.Device{Type: routesTo, Index: id.Index}.String()
		d.Name = strings.TrimSuffix(d.Name, " ("+d.RoutesTo+")")
	}
	return d
}

// listLine is "cuda:0: NVIDIA H200 (UUID: GPU-...)", and for a device that
// routes to another, "flagos:0: NVIDIA H200 (UUID: GPU-...) -> cuda:0".
// Control characters of the driver's name and UUID are escaped, so that
// one device prints one line.
func listLine(d listed) string {
	line := d.Device + ": " + escape(d.Name)
	if d.UUID != "" {
		line += " (UUID: " + escape(d.UUID) + ")"
	}
	if d.RoutesTo != "" {
		line += " -> " + d.RoutesTo
	}
	return line
}
