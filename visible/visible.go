package visible

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of Resolve and Select; test them with errors.Is.
var (
	// ErrUndecidable: how the runtime reads the value (or orders its
	// devices) is not public, or needs facts the caller's source does not
	// have (UUIDs, MIG instances): only the runtime itself can answer.
	ErrUndecidable = errors.New("visible: visibility cannot be decided without the runtime")
	// ErrSelection: a selection names no device, a device twice, or a
	// device or a combination the runtime cannot be made to show.
	ErrSelection = errors.New("visible: bad selection")
)

// Device is one device as visibility rules see it: what a variable may
// name it by. Give every device the source lists (whole devices and
// partitions alike), in the source's order.
type Device struct {
	// UUID is the vendor's form ("GPU-8a1f...", "MIG-...", KFD's
	// "GPU-<16 hex>", CNDev's 36 characters); "" when unknown.
	UUID string
	// PCIBusID is the device's PCI address in any of the usual forms
	// ("0000:18:00.0", NVML's "00000000:18:00.0"); "" when unknown.
	PCIBusID string
	// Model, Major and Minor tell devices of one kind apart: a runtime
	// that orders its devices fastest first (CUDA's default) can only be
	// predicted where every device is of one kind.
	Model        string
	Major, Minor int
	// Partition says the device is a partition of another (a MIG
	// instance), Parent its position in the list.
	Partition bool
	Parent    int
	// Partitioned says the device is split into partitions (a GPU in MIG
	// mode): a runtime sees its partitions, not the device itself.
	Partitioned bool
	// PartitionsListed says the source lists this device's partitions,
	// if it has any (NVML's MIG calls answered): a MIG name that matches
	// none of them names nothing. Where a whole device lacks it, such a
	// name is ErrUndecidable.
	PartitionsListed bool
}

// Lookup reads a variable, telling unset (false) from set and empty:
// os.LookupEnv.
type Lookup func(name string) (string, bool)

// Rules are one runtime's visibility rules: the stages it applies, in
// order, and the variable that orders its devices.
type Rules struct {
	// Runtime names the runtime in messages: "CUDA".
	Runtime string
	// Stages apply one after the other, each to the devices the one before
	// left, numbered anew.
	Stages []Stage
	// Order, when set, is how the runtime orders its devices before the
	// first stage; nil says the source's order is the runtime's.
	Order *Order
}

// Stage is one filter a runtime applies: the first of Vars that is set
// (and not empty, where the Var says so) is parsed with Dialect; none set
// keeps every device.
type Stage struct {
	Vars    []Var
	Dialect Dialect
}

// Var is one variable a stage reads.
type Var struct {
	Name string
	// EmptyIsUnset: a set and empty value reads as unset (HIP's CLR).
	EmptyIsUnset bool
	// Unknown, when not "", says why how the runtime reads this variable
	// is not known: a set value makes the answer ErrUndecidable, and
	// Select refuses an environment where it is set.
	Unknown string
	// Foreign: the variable is another runtime's own as well (CLR reads
	// CUDA_VISIBLE_DEVICES): Select never writes it.
	Foreign bool
}

// Mapping is what a runtime started with an environment sees.
type Mapping struct {
	// Visible are positions in the devices given to Resolve, in the
	// runtime's order: Visible[i] is the device the runtime numbers i.
	Visible []int
	// Applied are the variables that were read, "NAME=value" joined by
	// " then "; "" when none was set.
	Applied string
	// Ordered is false when the runtime numbers the visible devices in an
	// order of its own that cannot be predicted (CUDA's FASTEST_FIRST
	// among devices of different kinds): the set is right, and Visible is
	// in the source's order.
	Ordered bool
	// Notes say what a user may not expect, one line each.
	Notes []string
}

// Resolve applies r to devs (every device a source lists, in its order)
// with the variables env reads. It never panics; an error wraps
// ErrUndecidable and says why.
func (r *Rules) Resolve(devs []Device, env Lookup) (Mapping, error) {
	var m Mapping
	order, ordered, err := r.order(devs, env, &m)
	if err != nil {
		return m, err
	}
	m.Ordered = ordered
	cur := order // positions in devs, in the runtime's order
	var applied []string
	for _, st := range r.Stages {
		v, value, ok := st.pick(env)
		if !ok {
			continue
		}
		applied = append(applied, v.Name+"="+value)
		m.Applied = strings.Join(applied, " then ")
		if v.Unknown != "" {
			return m, fmt.Errorf("%w: %s=%q is set, and %s", ErrUndecidable, v.Name, value, v.Unknown)
		}
		p := r.pool(devs, cur)
		sel, err := st.Dialect.Select(value, p)
		if err != nil {
			return m, fmt.Errorf("%s=%q: %w", v.Name, value, err)
		}
		if sel.ByIndex && !m.Ordered && len(sel.Positions) > 0 {
			return m, fmt.Errorf("%w: %s=%q names devices by index, and %s numbers these devices in an order of its own (%s)",
				ErrUndecidable, v.Name, value, r.Runtime, strings.Join(m.Notes, "; "))
		}
		if !sel.ByIndex {
			m.Ordered = true // the list gives the order
		}
		m.Notes = append(m.Notes, sel.Notes...)
		next := make([]int, 0, len(sel.Positions))
		for _, i := range sel.Positions {
			next = append(next, p.at[i])
		}
		cur = next
	}
	if len(applied) == 0 && anyPartitioned(devs) {
		// No variable: CUDA's own choice among MIG instances still applies.
		p := r.pool(devs, cur)
		if sel, ok, err := partitionsOf(p, wholeOf(p)); ok || err != nil {
			if err != nil {
				return m, err
			}
			if !m.Ordered && countPartitioned(p) > 1 {
				return m, fmt.Errorf("%w: CUDA shows the first MIG instance of the first GPU in MIG mode, and which GPU comes first is its own choice (%s)",
					ErrUndecidable, strings.Join(m.Notes, "; "))
			}
			m.Ordered = true
			m.Notes = append(m.Notes, sel.Notes...)
			cur = cur[:0:0]
			for _, i := range sel.Positions {
				cur = append(cur, p.at[i])
			}
		}
	}
	if cur == nil {
		cur = []int{}
	}
	m.Visible = cur
	return m, nil
}

// pick is the variable the stage reads, if any is set.
func (st Stage) pick(env Lookup) (Var, string, bool) {
	for _, v := range st.Vars {
		value, set := env(v.Name)
		if !set || (v.EmptyIsUnset && value == "") {
			continue
		}
		return v, value, true
	}
	return Var{}, "", false
}

// Pool is what a dialect selects from: the devices a stage sees, in the
// runtime's order.
type Pool struct {
	// Devices in the runtime's order (whole devices and partitions).
	Devices []Device
	// Partitions: the source lists every device's partitions
	// (Device.PartitionsListed).
	Partitions bool
	// at maps a pool position to the position in Resolve's devices.
	at []int
}

// pool is the stage's view of devs at positions cur: the devices, and
// every partition of a whole device among them (after them), for a
// runtime whose source lists partitions.
func (r *Rules) pool(devs []Device, cur []int) Pool {
	p := Pool{Partitions: partitionsListed(devs)}
	add := func(i int) {
		p.Devices = append(p.Devices, devs[i])
		p.at = append(p.at, i)
	}
	in := map[int]int{} // devs position -> pool position
	for _, i := range cur {
		in[i] = len(p.Devices)
		add(i)
	}
	if p.Partitions || anyPartitioned(devs) {
		for _, i := range cur {
			if devs[i].Partition {
				continue
			}
			for j, d := range devs {
				if _, ok := in[j]; !ok && d.Partition && d.Parent == i {
					in[j] = len(p.Devices)
					add(j)
				}
			}
		}
	}
	// Parents as pool positions.
	for k := range p.Devices {
		if p.Devices[k].Partition {
			if q, ok := in[p.Devices[k].Parent]; ok {
				p.Devices[k].Parent = q
			} else {
				p.Devices[k].Parent = -1
			}
		}
	}
	return p
}

// Whole are the positions of the pool's whole devices (not partitions),
// in order: what indexes count.
func (p Pool) Whole() []int { return wholeOf(p) }

func wholeOf(p Pool) []int {
	out := []int{}
	for i, d := range p.Devices {
		if !d.Partition {
			out = append(out, i)
		}
	}
	return out
}

// UUIDs reports whether any device of the pool has a UUID.
func (p Pool) UUIDs() bool {
	for _, d := range p.Devices {
		if d.UUID != "" {
			return true
		}
	}
	return false
}

// Selection is what a dialect read from a value.
type Selection struct {
	// Positions in the pool, in the runtime's order.
	Positions []int
	// ByIndex: the devices were named by index, so which devices they are
	// depends on the runtime's order.
	ByIndex bool
	// Notes say what a user may not expect.
	Notes []string
}

// Dialect is the syntax one runtime reads a visibility variable with.
type Dialect interface {
	// Select returns what value (a set variable) names in p. An error
	// wraps ErrUndecidable.
	Select(value string, p Pool) (Selection, error)
	// Format returns the value that names exactly the devices at
	// positions sel of p, in that order, for a child's environment. An
	// error wraps ErrSelection (the runtime cannot be made to show that)
	// or ErrUndecidable.
	Format(p Pool, sel []int) (string, error)
}

func countPartitioned(p Pool) int {
	n := 0
	for _, d := range p.Devices {
		if !d.Partition && d.Partitioned {
			n++
		}
	}
	return n
}

// partitionsListed reports whether the source lists every whole device's
// partitions.
func partitionsListed(devs []Device) bool {
	whole := 0
	for _, d := range devs {
		if d.Partition {
			continue
		}
		whole++
		if !d.PartitionsListed {
			return false
		}
	}
	return whole > 0
}

func anyPartitioned(devs []Device) bool {
	for _, d := range devs {
		if d.Partitioned || d.Partition {
			return true
		}
	}
	return false
}
