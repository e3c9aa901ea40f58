package presence

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/visible"
)

// The visibility rules themselves are package visible's: every runtime's
// dialect, its order variable and its stages, as data (visible.Rules) that
// each vendor package writes beside its sources. This file applies them to
// what a source lists.

// AsVisible is what visibility rules need of devs (every device a source
// lists, in its order): UUIDs, PCI addresses, kinds, and which device a
// partition belongs to (Parent).
func AsVisible(devs []Device) []visible.Device {
	out := make([]visible.Device, len(devs))
	at := map[string]int{}
	for i, d := range devs {
		if d.UUID != "" && d.Parent == "" {
			at[d.UUID] = i
		}
	}
	for i, d := range devs {
		out[i] = visible.Device{UUID: d.UUID, PCIBusID: d.PCIBusID, Model: d.Name, Major: d.Major, Minor: d.Minor,
			Partitioned: d.Partitioned, PartitionsListed: d.PartitionsListed}
		if d.Parent != "" {
			out[i].Partition = true
			out[i].Parent = -1
			if p, ok := at[d.Parent]; ok {
				out[i].Parent = p
			}
		}
	}
	return out
}

// Map applies rules to all (every device a source lists, in its order)
// with the variables e reads: which of them the runtime sees, in its
// order. It is how a tier learns the visible index of a device it knows
// by UUID or PCI address: Mapping.Visible[i] is the position in all of the
// device the runtime numbers i.
func (e *Env) Map(rules *visible.Rules, all []Device) (visible.Mapping, error) {
	return rules.Resolve(AsVisible(all), e.Lookup)
}

// VisibleRules is a Management.Visible or NodesOf visible func that
// applies rules: the devices the runtime sees, numbered in its order, and
// the variables read. Where the runtime's order among them cannot be
// predicted, the devices come in the source's order (see Env.Map).
func (e *Env) VisibleRules(rules *visible.Rules) func([]Device) ([]Device, string, error) {
	return func(all []Device) ([]Device, string, error) {
		devs, m, err := e.applyRules(rules, all)
		return devs, m.Applied, err
	}
}

// applyRules maps all through rules and numbers the devices the runtime
// sees.
func (e *Env) applyRules(rules *visible.Rules, all []Device) ([]Device, visible.Mapping, error) {
	m, err := e.Map(rules, all)
	if err != nil {
		return nil, m, err
	}
	return renumber(all, m.Visible), m, nil
}

// Visible applies a CUDA_VISIBLE_DEVICES-style variable to devs (every
// whole device a source sees, in its order) with CUDA's rules
// (visible.CUDA, without MIG instances or an order variable): set false
// (unset) keeps every device; set and empty keeps none. The result's
// Index fields are the ordinals the runtime will give the devices. A UUID
// list where the devices carry no UUID, and a MIG list, are
// ErrUndecidable. Vendor packages describe their runtime's rules as
// visible.Rules instead (Env.VisibleRules); this stays for out-of-tree
// vendors whose NodeSpec names a variable read like CUDA's.
func Visible(devs []Device, value string, set bool) ([]Device, error) {
	if !set {
		return renumber(devs, nil), nil
	}
	r := &visible.Rules{Runtime: "the runtime", Stages: []visible.Stage{{Vars: []visible.Var{{Name: "v"}}, Dialect: visible.CUDA{UUIDPrefix: "GPU-"}}}}
	m, err := r.Resolve(AsVisible(devs), func(string) (string, bool) { return value, true })
	if err != nil {
		return nil, err
	}
	return renumber(devs, m.Visible), nil
}

// Renumber gives devs the ordinals 0..n-1 in their order, as a copy.
func Renumber(devs []Device) []Device { return renumber(devs, nil) }

// renumber copies the selected devices (all of them for sel nil) with their
// new ordinals.
func renumber(devs []Device, sel []int) []Device {
	if sel == nil {
		sel = make([]int, len(devs))
		for i := range sel {
			sel[i] = i
		}
	}
	out := make([]Device, 0, len(sel))
	for i, s := range sel {
		d := devs[s]
		d.Index = i
		out = append(out, d)
	}
	return out
}

// undecidableReason is the sentence of a source whose visibility variable
// cannot be resolved.
func undecidableReason(label string, total int, applied string, err error) string {
	why := err.Error()
	if applied != "" && !strings.Contains(why, strings.SplitN(applied, "=", 2)[0]) {
		why = applied + ": " + why
	}
	return fmt.Sprintf("%s sees %d device%s, but %s; use FLAGOS_PROBE=isolated", label, total, Plural(total), why)
}
