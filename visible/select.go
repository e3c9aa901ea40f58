package visible

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Setting is one variable of a child's environment.
type Setting struct {
	Name, Value string
}

// Select returns the environment that makes exactly the devices at
// positions want of devs (every device a source lists, in its order)
// visible, in that order, to a process of r's runtime started with it: the
// first stage's variables name the devices (by UUID where the runtime takes
// UUIDs, else by index), each later stage's keep all of them, and the
// order variable is set where indexes depend on it. env is the current
// environment, which the child inherits: a variable set there whose effect
// is not known makes the answer ErrUndecidable. A selection that is empty,
// names a device twice or out of range, or that the runtime cannot show
// (two MIG instances, a GPU in MIG mode) wraps ErrSelection.
func (r *Rules) Select(devs []Device, want []int, env Lookup) ([]Setting, error) {
	if len(want) == 0 {
		return nil, fmt.Errorf("%w: no device given", ErrSelection)
	}
	seen := map[int]bool{}
	for _, i := range want {
		if i < 0 || i >= len(devs) {
			return nil, fmt.Errorf("%w: device %d is not one of the %d listed", ErrSelection, i, len(devs))
		}
		if seen[i] {
			return nil, fmt.Errorf("%w: %s is given twice", ErrSelection, name(devs[i], i))
		}
		seen[i] = true
	}
	if len(r.Stages) == 0 {
		return nil, fmt.Errorf("%w: %s has no visible-devices variable", ErrSelection, r.Runtime)
	}
	for _, st := range r.Stages {
		if err := st.blocked(env); err != nil {
			return nil, err
		}
	}
	var m Mapping
	order, ordered, err := r.order(devs, env, &m)
	if err != nil {
		return nil, err
	}
	var out []Setting
	var orderSet []Setting
	first, err := r.format(r.Stages[0].Dialect, devs, order, want)
	if err != nil {
		return nil, err
	}
	if isIndexes(first) && r.Order != nil {
		// Indexes mean what the child's order makes them mean: say it.
		pci, ok := r.Order.pciValue()
		sorted, known := byPCI(devs, order)
		switch {
		case ok && known:
			if first, err = r.format(r.Stages[0].Dialect, devs, sorted, want); err != nil {
				return nil, err
			}
			orderSet = []Setting{{r.Order.Var, pci}}
		case !ordered:
			return nil, fmt.Errorf("%w: the devices carry no UUID and %s's order among them cannot be predicted (%s)", ErrUndecidable, r.Runtime, strings.Join(m.Notes, "; "))
		}
	}
	out = append(out, r.Stages[0].settings(first)...)
	for _, st := range r.Stages[1:] {
		// Later stages see exactly the devices wanted, in order: keep all.
		p := r.pool(devs, want)
		v, err := st.Dialect.Format(p, wholeOf(p))
		if err != nil {
			return nil, err
		}
		out = append(out, st.settings(v)...)
	}
	return append(out, orderSet...), nil
}

// format is the first stage's value for want, over the devices in order.
func (r *Rules) format(d Dialect, devs []Device, order, want []int) (string, error) {
	p := r.pool(devs, order)
	sel := make([]int, 0, len(want))
	for _, i := range want {
		k := indexOf(p.at, i)
		if k < 0 {
			return "", fmt.Errorf("%w: %s is not a device %s can show", ErrSelection, name(devs[i], i), r.Runtime)
		}
		sel = append(sel, k)
	}
	return d.Format(p, sel)
}

// settings are the stage's variables set to value: every one Select may
// write.
func (st Stage) settings(value string) []Setting {
	var out []Setting
	for _, v := range st.Vars {
		if v.Unknown == "" && !v.Foreign {
			out = append(out, Setting{v.Name, value})
		}
	}
	return out
}

// blocked reports a variable of unknown effect that a child would read:
// set in env and before every variable Select writes.
func (st Stage) blocked(env Lookup) error {
	for _, v := range st.Vars {
		if v.Unknown == "" && !v.Foreign {
			return nil // written: what follows is not read
		}
		if value, set := env(v.Name); v.Unknown != "" && set && !(v.EmptyIsUnset && value == "") {
			return fmt.Errorf("%w: %s=%q is set and %s; unset it to select devices", ErrUndecidable, v.Name, value, v.Unknown)
		}
	}
	return nil
}

// pciValue is the value of the order variable that orders by PCI bus id.
func (o *Order) pciValue() (string, bool) {
	var vals []string
	for v, k := range o.Values {
		if k == PCIBusOrder {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return "", false
	}
	slices.Sort(vals)
	return vals[0], true
}

// isIndexes reports whether a formatted value names devices by index.
func isIndexes(v string) bool { return strings.Trim(v, "0123456789,") == "" }

// Vars are the names of every variable r reads, stages first, then the
// order variable.
func (r *Rules) Vars() []string {
	var out []string
	for _, st := range r.Stages {
		for _, v := range st.Vars {
			if !slices.Contains(out, v.Name) {
				out = append(out, v.Name)
			}
		}
	}
	if r.Order != nil && !slices.Contains(out, r.Order.Var) {
		out = append(out, r.Order.Var)
	}
	return out
}

// distinct refuses a selection that names a device twice.
func distinct(p Pool, sel []int) error {
	seen := map[int]bool{}
	for _, i := range sel {
		if i < 0 || i >= len(p.Devices) {
			return fmt.Errorf("%w: position %d out of range", ErrSelection, i)
		}
		if seen[i] {
			return fmt.Errorf("%w: %s is given twice", ErrSelection, name(p.Devices[i], i))
		}
		seen[i] = true
	}
	return nil
}

// every reports whether f holds for every selected device.
func every(p Pool, sel []int, f func(Device) bool) bool {
	for _, i := range sel {
		if !f(p.Devices[i]) {
			return false
		}
	}
	return true
}

func joinUUIDs(p Pool, sel []int) string {
	var b strings.Builder
	for k, i := range sel {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.Devices[i].UUID)
	}
	return b.String()
}

// indexes writes the selected whole devices' indexes among the pool's.
func indexes(p Pool, sel []int) (string, error) {
	if err := distinct(p, sel); err != nil {
		return "", err
	}
	whole := wholeOf(p)
	var b strings.Builder
	for k, i := range sel {
		idx := indexOf(whole, i)
		if idx < 0 {
			return "", fmt.Errorf("%w: %s is a partition, which this runtime's variable cannot name", ErrSelection, name(p.Devices[i], i))
		}
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(idx))
	}
	return b.String(), nil
}

func indexOf(s []int, v int) int {
	for k, x := range s {
		if x == v {
			return k
		}
	}
	return -1
}
