package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
)

// exitUnusable is the status of list --accelerators-only and query where
// accelerators of a known maker are present (sysfs shows them) but none
// can be used: the driver or the management library fails. 6
// (exitNoDevice) stays "nothing there", so a fleet's health check tells a
// broken driver from a machine without accelerators.
const exitUnusable = 7

// queryDetail is query's usage after its synopsis.
var queryDetail = `One row per device, in nvidia-smi's CSV: the vendor backends' devices that a
device string can name here (in each backend's visible order), then the
devices present but unusable (their driver or management library fails):

  $ flagshim query --query-gpu=index,uuid,name,pci.bus_id,memory.total --format=csv
  index, uuid, name, pci.bus_id, memory.total [MiB]
  0, GPU-8a1f..., NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559 MiB

Field names, headers and values are nvidia-smi's where it has the field
(values joined by ", ", "[N/A]" for what the tier cannot tell); the others
are flagshim's. docs/identity.md says where each value comes from.

fields:
` + queryFieldHelp() + `
flags:
  --query-gpu FIELD[,FIELD...]  the columns (nvidia-smi's aliases gpu_name, gpu_uuid and
                                gpu_bus_id are accepted)
  --format csv[,noheader][,nounits]
                                csv (the default and the one format); noheader leaves the
                                header out, nounits the units ("81559" for "81559 MiB")
` + probeHelp + `
Without --probe or FLAGOS_PROBE, query answers as list does: from the
management libraries (NVML, ...) and sysfs, a vendor they cannot see asked
in an isolated child.

query exits 0 when it printed a usable device, 6 when there is no
accelerator ("no accelerator found" on stderr, as nvidia-smi exits 6), ` + fmt.Sprint(exitUnusable) + `
when accelerators are present but none is usable (each backend's reason on
stderr), 2 on a bad field or format (one line naming it and what is
accepted), 1 on a bad setting.
`

// queryFieldHelp lists the fields, one per line.
func queryFieldHelp() string {
	var b strings.Builder
	for _, f := range queryFields {
		name := f.name
		if f.smi {
			name += " *"
		}
		fmt.Fprintf(&b, "  %-20s %s\n", name, f.doc)
	}
	b.WriteString("  (* nvidia-smi's field, in its form)\n")
	return b.String()
}

// queryError prints one line (the input, what is accepted) and where the
// usage is, as every usage error does, and returns the usage status.
func queryError(s *session, c *command, err error) int {
	return usageError(s.stderr, c, "query: "+err.Error())
}

func runQuery(s *session, c *command, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fields := fs.String("query-gpu", "", "")
	format := fs.String("format", "csv", "")
	args, code, ok := probeFlags(s, c, fs, args)
	if !ok {
		return code
	}
	if code, ok := noArgs(s, c, args); !ok {
		return code
	}
	qf, err := parseQuery(*fields)
	if err != nil {
		return queryError(s, c, err)
	}
	f, err := parseFormat(*format)
	if err != nil {
		return queryError(s, c, err)
	}
	free, memory := false, false
	for _, q := range qf {
		free = free || q.name == "memory.used" || q.name == "memory.free"
		memory = memory || strings.HasPrefix(q.name, "memory.")
	}
	s.listDefaults()
	if memory {
		// The management library's free memory and reserve, in every
		// tier: memory.total is nvidia-smi's, the runtime's total and
		// the reserve.
		s.opts = append(s.opts, flagshim.WithFreeMemory())
	}
	s.showsEveryBackend()
	if _, _, bad := s.initialise(); bad != nil {
		return fail(s.stderr, bad)
	}
	if _, err := device.Lookup(device.CPU); err != nil {
		return fail(s.stderr, err)
	}
	inv := takeInventory(true, free)
	recs := append(inv.usable, inv.unusable...)
	var b strings.Builder
	writeCSV(&b, qf, f, recs)
	_, outErr := io.WriteString(s.stdout, b.String())
	inv.note(s.stderr)
	if len(recs) == 0 {
		fmt.Fprintf(s.stderr, "%sno accelerator found (`flagshim explain` says what was tried)\n", prefix)
	}
	code = s.done(outErr, errors.Join(inv.errs...))
	if code != exitOK {
		return code
	}
	return inv.status()
}

// listDefaults makes presence, with isolated children where it sees
// nothing, the tier of list and query when neither --probe nor
// FLAGOS_PROBE chooses one: nvidia-smi -L and --query-gpu answer from the
// management library.
func (s *session) listDefaults() {
	if v, _ := lookupEnv(flagshim.EnvProbe); s.probeTier == "" && strings.TrimSpace(v) == "" {
		s.defaultTier = tier.Presence
		s.opts = append(s.opts, flagshim.WithDefaultProbe(tier.Presence), flagshim.WithIsolatedFallback())
	}
}

// inventory is what list and query show of the vendor backends: the
// devices a device string names, and those present but unusable.
type inventory struct {
	usable   []device.Record
	unusable []device.Record
	// reasons are, by backend, why its present devices are unusable.
	reasons []string
	errs    []error
}

// takeInventory reads every vendor backend of device.Default, in
// registration order: with records, each usable device's Record (else
// only unusable ones are records); with free, each usable device's free
// memory where the tier did not learn it (the exact tier: MemInfo, which
// creates the device's context).
func takeInventory(records, free bool) inventory {
	var inv inventory
	for _, b := range device.Default.Backends() {
		if t := b.Type(); t == device.CPU || t == device.FlagOS {
			continue
		}
		id, ok := b.(device.Identifier)
		if !ok {
			continue
		}
		if r := b.Available(); r.Available && records {
			for i := 0; i < r.Devices; i++ {
				rec, err := id.Record(i)
				if err != nil {
					inv.errs = append(inv.errs, fmt.Errorf("%s:%d: cannot read its record: %w", b.Type(), i, err))
					continue
				}
				if free && rec.Unknown["free_memory"] != "" {
					fillFree(b, i, &rec)
				}
				inv.usable = append(inv.usable, rec)
			}
		}
		if un := id.Unusable(); len(un) > 0 {
			inv.unusable = append(inv.unusable, un...)
			inv.reasons = append(inv.reasons, fmt.Sprintf("%s: %d device%s present but unusable: %s", b.Type(), len(un), plural(len(un)), un[0].Reason))
		}
	}
	return inv
}

// fillFree asks the backend's MemInfo for the free memory the record
// lacks.
func fillFree(b device.Backend, i int, r *device.Record) {
	m, ok := b.(device.Memory)
	if !ok {
		return
	}
	if fr, total, err := m.MemInfo(i); err == nil && fr <= total {
		r.FreeMemory = fr
		delete(r.Unknown, "free_memory")
	}
}

// note writes to stderr why present devices are unusable, one line per
// backend.
func (inv *inventory) note(stderr io.Writer) {
	for _, r := range inv.reasons {
		fmt.Fprintf(stderr, "%s%s\n", prefix, escape(r))
	}
}

// status is the exit status of "is there a usable accelerator?": 0, 6
// when none is there, exitUnusable when some are present but none usable.
func (inv *inventory) status() int {
	switch {
	case len(inv.usable) > 0:
		return exitOK
	case len(inv.unusable) > 0:
		return exitUnusable
	}
	return exitNoDevice
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
