package visible

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// OrderKind is how a runtime orders its devices.
type OrderKind int

const (
	// SourceOrder: the runtime's order is the source's.
	SourceOrder OrderKind = iota
	// PCIBusOrder: ascending PCI bus id (domain, bus, device, function).
	PCIBusOrder
	// FastestFirst: fastest to slowest by a heuristic the runtime does not
	// publish. Predictable only where every whole device is of one kind
	// (Model, Major, Minor): then nothing tells them apart and they come
	// in PCI bus order, as they are observed to and as PyTorch assumes
	// (torch.cuda._get_nvml_device_index maps CUDA's ordinals to NVML's
	// one for one). Otherwise the set of devices is known and their order
	// is not.
	FastestFirst
	// UnknownOrder: the runtime orders its devices in a way that is not
	// public (a value its documentation does not name).
	UnknownOrder
)

// Order is the variable that orders a runtime's devices.
type Order struct {
	Var string // CUDA_DEVICE_ORDER
	// Values are the values the runtime documents, each with its order.
	Values map[string]OrderKind
	// Default is the order when Var is unset or empty; Other the order for
	// a value not in Values.
	Default, Other OrderKind
	// Doc says where the rule comes from, for notes.
	Doc string
}

// order is the whole devices' positions in devs in the runtime's order
// (partitions are not ordered: they follow their parents), whether that
// order is known, and an error where the devices cannot be ordered at all.
func (r *Rules) order(devs []Device, env Lookup, m *Mapping) ([]int, bool, error) {
	var whole []int
	for i, d := range devs {
		if !d.Partition {
			whole = append(whole, i)
		}
	}
	if r.Order == nil {
		return whole, true, nil
	}
	o := r.Order
	kind, value := o.Default, ""
	if v, set := env(o.Var); set && v != "" {
		value = v
		k, ok := o.Values[v]
		if !ok {
			k = o.Other
		}
		kind = k
	}
	say := func(format string, a ...any) {
		m.Notes = append(m.Notes, fmt.Sprintf(format, a...))
	}
	switch kind {
	case SourceOrder:
		return whole, true, nil
	case PCIBusOrder:
		sorted, ok := byPCI(devs, whole)
		if !ok {
			say("%s=%s orders devices by PCI bus id, and the source does not give every device's", o.Var, value)
			return whole, len(whole) <= 1, nil
		}
		return sorted, true, nil
	case FastestFirst:
		if len(whole) <= 1 {
			return whole, true, nil
		}
		if !alike(devs, whole) {
			what := "unset"
			if value != "" {
				what = "=" + value
			}
			say("%s %s: %s orders devices of different kinds fastest first by a heuristic it does not publish; set %s=PCI_BUS_ID for a predictable order",
				o.Var, what, r.Runtime, o.Var)
			return whole, false, nil
		}
		if sorted, ok := byPCI(devs, whole); ok {
			return sorted, true, nil
		}
		return whole, true, nil
	default:
		say("%s=%s: how %s orders its devices then is not documented", o.Var, value, r.Runtime)
		return whole, len(whole) <= 1, nil
	}
}

// alike reports whether the devices at positions are all of one known kind.
func alike(devs []Device, positions []int) bool {
	first := devs[positions[0]]
	if first.Model == "" {
		return false
	}
	for _, i := range positions[1:] {
		d := devs[i]
		if d.Model != first.Model || d.Major != first.Major || d.Minor != first.Minor {
			return false
		}
	}
	return true
}

// byPCI sorts positions by their devices' PCI bus ids; false when one is
// missing or unreadable.
func byPCI(devs []Device, positions []int) ([]int, bool) {
	keys := make(map[int][4]uint64, len(positions))
	for _, i := range positions {
		k, ok := ParsePCIBusID(devs[i].PCIBusID)
		if !ok {
			return positions, false
		}
		keys[i] = k
	}
	out := slices.Clone(positions)
	slices.SortStableFunc(out, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		for j := range ka {
			if c := cmp.Compare(ka[j], kb[j]); c != 0 {
				return c
			}
		}
		return 0
	})
	return out, true
}

// ParsePCIBusID reads "domain:bus:device.function" in hex (any width, any
// case: sysfs's "0000:18:00.0", NVML's "00000000:18:00.0") and
// "bus:device.function" (domain 0).
func ParsePCIBusID(s string) ([4]uint64, bool) {
	var out [4]uint64
	s = strings.TrimSpace(s)
	dot := strings.LastIndexByte(s, '.')
	if dot < 0 {
		return out, false
	}
	parts := strings.Split(s[:dot], ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return out, false
	}
	for i, p := range append(parts, s[dot+1:]) {
		if p == "" || len(p) > 16 {
			return out, false
		}
		v, err := strconv.ParseUint(p, 16, 64)
		if err != nil {
			return out, false
		}
		out[i] = v
	}
	return out, true
}

// SamePCI reports whether a and b are one PCI address, whatever their
// forms.
func SamePCI(a, b string) bool {
	ka, ok1 := ParsePCIBusID(a)
	kb, ok2 := ParsePCIBusID(b)
	return ok1 && ok2 && ka == kb
}
