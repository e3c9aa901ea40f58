package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flagos-ai/flagshim/device"
)

// The fields of `flagshim query --query-gpu=...`. Where nvidia-smi has the
// field, the name, the header and the value's form are nvidia-smi's
// (`nvidia-smi --help-query-gpu`; its CSV: values joined by ", ", a
// unit after the number, "[N/A]" for a value it does not have): index,
// uuid, name, pci.bus_id ("00000000:18:00.0"), memory.total ("81559 MiB",
// the header "memory.total [MiB]"), memory.reserved, memory.used,
// memory.free,
// driver_version, compute_cap ("9.0"), pci.device_id ("0x233010DE"),
// count. The others are flagshim's: what a device string names
// (visible_index, device, type), the FlagOS vendor name (vendor), and
// sysfs's and the tier's facts.

// naValue is nvidia-smi's word for a value it does not have.
const naValue = "[N/A]"

// queryField is one column of query.
type queryField struct {
	name string
	unit string // "MiB": the header is "name [MiB]" and the value "N MiB" (without nounits)
	doc  string
	smi  bool // nvidia-smi has the field, with this name and form
	// value is the field's value for r (rows is the number of rows), ""
	// when unknown ([N/A]); numbers of fields with a unit are in that unit.
	value func(r *device.Record, rows int) string
}

// header is the field's column header.
func (f *queryField) header() string {
	if f.unit == "" {
		return f.name
	}
	return f.name + " [" + f.unit + "]"
}

func known(r *device.Record, key string) bool { return r.Unknown[key] == "" }

func mib(n uint64) string { return strconv.FormatUint(n>>20, 10) }

// freeKnown reports whether r's free memory is known: the tier learned it
// (or MemInfo did), and it is not more than the total.
func freeKnown(r *device.Record) bool {
	return known(r, "free_memory") && r.TotalMemory > 0 && r.FreeMemory <= r.TotalMemory
}

// smiTotal is nvidia-smi's memory.total in bytes: the device's whole
// memory, the record's total (what the runtime can allocate) and the
// reserve of its driver and firmware; where the reserve is unknown (a
// management library that does not tell it apart, or none that answered),
// the record's total alone, as that library's total is (list --json's
// record says why in unknown.reserved_memory). 0 unknown.
func smiTotal(r *device.Record) uint64 {
	if r.TotalMemory == 0 {
		return 0
	}
	if known(r, "reserved_memory") && r.ReservedMemory <= math.MaxUint64-r.TotalMemory {
		return r.TotalMemory + r.ReservedMemory
	}
	return r.TotalMemory
}

var queryFields = []*queryField{
	{name: "index", smi: true, doc: "the physical index, as nvidia-smi numbers it (PCI order)", value: func(r *device.Record, _ int) string {
		if r.Index < 0 {
			return ""
		}
		return strconv.Itoa(r.Index)
	}},
	{name: "uuid", smi: true, doc: "the UUID in the vendor's own form", value: func(r *device.Record, _ int) string { return r.UUID }},
	{name: "name", smi: true, doc: "the product name", value: func(r *device.Record, _ int) string { return r.Name }},
	{name: "pci.bus_id", smi: true, doc: `the PCI address in nvidia-smi's form, "00000000:18:00.0"`, value: func(r *device.Record, _ int) string {
		return smiBusID(r.PCIBusID)
	}},
	{name: "pci.device_id", smi: true, doc: `the PCI device and vendor ids, "0x233010DE" (sysfs)`, value: func(r *device.Record, _ int) string {
		if r.PCIDeviceID == 0 {
			return ""
		}
		return fmt.Sprintf("0x%08X", r.PCIDeviceID)
	}},
	{name: "memory.total", unit: "MiB", smi: true, doc: "the whole memory: what the runtime can allocate and what its driver reserves", value: func(r *device.Record, _ int) string {
		if t := smiTotal(r); t != 0 {
			return mib(t)
		}
		return ""
	}},
	{name: "memory.reserved", unit: "MiB", smi: true, doc: "the memory the driver and firmware reserve (from the management library)", value: func(r *device.Record, _ int) string {
		if r.TotalMemory == 0 || !known(r, "reserved_memory") {
			return ""
		}
		return mib(r.ReservedMemory)
	}},
	{name: "memory.used", unit: "MiB", smi: true, doc: "the memory allocated: what the runtime can allocate less what is free", value: func(r *device.Record, _ int) string {
		if !freeKnown(r) {
			return ""
		}
		return mib(r.TotalMemory - r.FreeMemory)
	}},
	{name: "memory.free", unit: "MiB", smi: true, doc: "the free memory", value: func(r *device.Record, _ int) string {
		if !freeKnown(r) {
			return ""
		}
		return mib(r.FreeMemory)
	}},
	{name: "driver_version", smi: true, doc: `the kernel driver's version, "580.95.05"`, value: func(r *device.Record, _ int) string { return r.DriverVersion }},
	{name: "compute_cap", smi: true, doc: `the compute capability (or architecture) major.minor, "9.0"`, value: func(r *device.Record, _ int) string {
		if !known(r, "major") || (r.Major == 0 && r.Minor == 0) {
			return ""
		}
		return strconv.Itoa(r.Major) + "." + strconv.Itoa(r.Minor)
	}},
	{name: "count", smi: true, doc: "the number of rows", value: func(_ *device.Record, rows int) string { return strconv.Itoa(rows) }},
	{name: "visible_index", doc: "what a device string names (cuda:N): the index after the visible-devices variable", value: func(r *device.Record, _ int) string {
		if r.VisibleIndex < 0 {
			return ""
		}
		return strconv.Itoa(r.VisibleIndex)
	}},
	{name: "device", doc: `the device string, "cuda:0"`, value: func(r *device.Record, _ int) string { return r.Device }},
	{name: "type", doc: `the backend's device type, "cuda"`, value: func(r *device.Record, _ int) string { return string(r.Type) }},
	{name: "vendor", doc: `the maker in FlagOS's vocabulary, "nvidia" (FlagGems's vendor_name)`, value: func(r *device.Record, _ int) string { return r.Vendor }},
	{name: "maker", doc: `whose runtime answered, "NVIDIA"`, value: func(r *device.Record, _ int) string { return r.Maker }},
	{name: "numa_node", doc: "the NUMA node (sysfs; -1 where the platform gives none)", value: func(r *device.Record, _ int) string {
		if !known(r, "numa_node") {
			return ""
		}
		return strconv.Itoa(r.NUMANode)
	}},
	{name: "local_cpus", doc: `the CPUs close to it, "0-47,96-143" (sysfs)`, value: func(r *device.Record, _ int) string { return r.LocalCPUs }},
	{name: "multiprocessors", doc: "its multiprocessors (SMs, CUs)", value: func(r *device.Record, _ int) string {
		if r.MultiProcessors == 0 {
			return ""
		}
		return strconv.Itoa(r.MultiProcessors)
	}},
	{name: "driver_api_version", doc: `the driver library's API version, "13.0"`, value: func(r *device.Record, _ int) string { return r.DriverAPIVersion }},
	{name: "parent", doc: "for a partition (a MIG instance), its device's UUID", value: func(r *device.Record, _ int) string {
		if !known(r, "parent") {
			return ""
		}
		return r.Parent
	}},
	{name: "tier", doc: "the probe tier that answered: exact, presence or isolated", value: func(r *device.Record, _ int) string { return r.Tier }},
	{name: "usable", doc: `"Yes", or "No" for a device that is present but cannot be used`, value: func(r *device.Record, _ int) string {
		if r.Usable {
			return "Yes"
		}
		return "No"
	}},
	{name: "reason", doc: "why a device cannot be used", value: func(r *device.Record, _ int) string { return r.Reason }},
}

// queryAliases are nvidia-smi's other names of its fields.
var queryAliases = map[string]string{"gpu_name": "name", "gpu_uuid": "uuid", "gpu_bus_id": "pci.bus_id"}

// fieldNames lists the valid field names, for messages.
func fieldNames() string {
	names := make([]string, len(queryFields))
	for i, f := range queryFields {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

func lookupField(name string) *queryField {
	if a, ok := queryAliases[name]; ok {
		name = a
	}
	for _, f := range queryFields {
		if f.name == name {
			return f
		}
	}
	return nil
}

// maxQueryInput bounds what parseQuery and parseFormat read.
const maxQueryInput = 4096

// parseQuery reads --query-gpu's value: field names separated by commas
// (spaces around them ignored; nvidia-smi's aliases accepted). An empty
// list, an empty name or an unknown one is an error that names the input
// and lists the valid fields.
func parseQuery(s string) ([]*queryField, error) {
	if len(s) > maxQueryInput {
		return nil, fmt.Errorf("--query-gpu is %d bytes long, more than %d: valid fields are %s", len(s), maxQueryInput, fieldNames())
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("--query-gpu needs at least one field: valid fields are %s", fieldNames())
	}
	var out []*queryField
	for _, raw := range strings.Split(s, ",") {
		name := strings.TrimSpace(raw)
		f := lookupField(name)
		if f == nil {
			what := fmt.Sprintf("unknown field %q", name)
			if name == "" {
				what = "an empty field"
			}
			return nil, fmt.Errorf("--query-gpu=%s: %s: valid fields are %s", strconv.Quote(s)[1:len(strconv.Quote(s))-1], what, fieldNames())
		}
		out = append(out, f)
	}
	return out, nil
}

// queryFormat is --format's value.
type queryFormat struct {
	noHeader, noUnits bool
}

// parseFormat reads --format's value: "csv", then "noheader" and
// "nounits" in any order, separated by commas (as nvidia-smi takes them).
// Anything else is an error that names the input and what is accepted.
func parseFormat(s string) (queryFormat, error) {
	var f queryFormat
	bad := func(why string) (queryFormat, error) {
		q := strconv.Quote(s)
		return queryFormat{}, fmt.Errorf("--format=%s: %s: accepted: csv, csv,noheader, csv,nounits, csv,noheader,nounits", q[1:len(q)-1], why)
	}
	if len(s) > maxQueryInput {
		return bad(fmt.Sprintf("%d bytes long", len(s)))
	}
	csv := false
	for _, raw := range strings.Split(s, ",") {
		switch opt := strings.TrimSpace(raw); opt {
		case "csv":
			csv = true
		case "noheader":
			f.noHeader = true
		case "nounits":
			f.noUnits = true
		case "":
			return bad("an empty option")
		default:
			return bad(fmt.Sprintf("unknown option %q", opt))
		}
	}
	if !csv {
		return bad("csv is the one format")
	}
	return f, nil
}

// writeCSV writes the rows as nvidia-smi's CSV: the header unless
// noHeader, then one line per record, values joined by ", ". A value that
// holds a comma or a double quote is quoted (RFC 4180), control characters
// escaped, so that each record is one line of as many columns as fields.
func writeCSV(b *strings.Builder, fields []*queryField, f queryFormat, recs []device.Record) {
	if !f.noHeader {
		for i, q := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(q.header())
		}
		b.WriteByte('\n')
	}
	for i := range recs {
		for j, q := range fields {
			if j > 0 {
				b.WriteString(", ")
			}
			v := q.value(&recs[i], len(recs))
			switch {
			case v == "":
				v = naValue
			case q.unit != "" && !f.noUnits:
				v += " " + q.unit
			}
			b.WriteString(csvValue(escape(v)))
		}
		b.WriteByte('\n')
	}
}

// csvValue quotes v where it holds a comma or a double quote.
func csvValue(v string) string {
	if !strings.ContainsAny(v, ",\"") {
		return v
	}
	return `"` + strings.ReplaceAll(v, `"`, `""`) + `"`
}

// smiBusID is a record's PCI address ("0000:18:00.0") in nvidia-smi's form:
// an 8-digit domain, upper case ("00000000:18:00.0"); "" for "".
func smiBusID(addr string) string {
	if addr == "" {
		return ""
	}
	return strings.ToUpper("0000" + addr)
}
