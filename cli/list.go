package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/device"
)

// list prints one line per device, as nvidia-smi -L does: cpu:0 first, the
// vendor backends' devices, then flagos's with the vendor device each one
// routes to.
func list(s *session) int {
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
	var b strings.Builder
	var errs []error
	accelerators := 0
	for _, group := range [][]device.Backend{cpu, vendors, flagos} {
		for _, be := range group {
			n, lines, err := listBackend(be)
			b.WriteString(lines)
			errs = append(errs, err)
			if be.Type() != device.CPU {
				accelerators += n
			}
		}
	}
	_, outErr := fmt.Fprint(s.stdout, b.String())
	if accelerators == 0 {
		fmt.Fprintf(s.stderr, "%sno accelerator found (`flagshim explain` says what was tried)\n", prefix)
	}
	return s.done(outErr, errors.Join(errs...))
}

// listBackend returns the lines of one backend's devices and how many there
// are. A backend that is not available has none.
func listBackend(b device.Backend) (n int, lines string, err error) {
	r := b.Available()
	if !r.Available {
		return 0, "", nil
	}
	routesTo := device.Type("")
	if d, ok := b.(device.Describer); ok {
		routesTo = d.Describe().RoutesTo
	}
	var sb strings.Builder
	var errs []error
	for i := 0; i < r.Devices; i++ {
		id := device.Device{Type: b.Type(), Index: i}
		p, err := b.Properties(i)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: cannot read its properties: %w", id, err))
			continue
		}
		sb.WriteString(listLine(id, p, routesTo))
		sb.WriteByte('\n')
	}
	return r.Devices, sb.String(), errors.Join(errs...)
}

// listLine is "cuda:0: NVIDIA H200 (UUID: GPU-...)", and for a device that
// routes to another, "flagos:0: NVIDIA H200 (UUID: GPU-...) -> cuda:0" (the
// router's own " (cuda:0)" at the end of the name is left out: the arrow says
// it).
func listLine(id device.Device, p device.Properties, routesTo device.Type) string {
	name := p.Name
	var target string
	if routesTo != "" {
		target = device.Device{Type: routesTo, Index: id.Index}.String()
		name = strings.TrimSuffix(name, " ("+target+")")
	}
	line := id.String() + ": " + name
	if p.UUID != "" {
		line += " (UUID: " + p.UUID + ")"
	}
	if target != "" {
		line += " -> " + target
	}
	return line
}
