package flagshim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/vendors"
	"github.com/flagos-ai/flagshim/visible"
)

// ErrSelection is wrapped by SelectEnv's error for a selection that names
// no device, a device twice, a UUID or PCI address no device has, a UUID
// prefix several devices share, an index out of range, or devices the
// runtime cannot be made to show together. ErrUndecidable is wrapped where
// the runtime's rules cannot say (the current environment sets a variable
// whose effect is not public, or devices named by index in an order only
// the runtime knows).
var (
	ErrSelection   = visible.ErrSelection
	ErrUndecidable = visible.ErrUndecidable
)

// Selection is the environment that makes exactly the chosen devices
// visible, in the order given, to a child process of the runtime that will
// run them.
type Selection struct {
	Type    device.Type // the vendor type the devices belong to ("cuda"; "npu" where cuda routes there)
	Runtime string      // the runtime whose rules apply: "CUDA"
	// Settings are the variables to set in the child's environment, in
	// order; the child inherits the rest of the environment.
	Settings []visible.Setting
	// Devices are the devices chosen, in the child's order: the child
	// numbers Devices[i] i.
	Devices []SelectedDevice
	// Source is the management library (or device nodes) the devices were
	// read from; Notes say what a user may not expect.
	Source string
	Notes  []string
}

// SelectedDevice is one device of a Selection.
type SelectedDevice struct {
	Spec     string // what named it: "GPU-8a1f", "0000:18:00.0", "1"
	Name     string
	UUID     string // in the vendor's form; "" when unknown
	PCIBusID string // in the source's form; "" when unknown
	// SourceIndex is the source's own index (NVML's, DCMI's logic id).
	SourceIndex int
}

// Env is the selection as KEY=VALUE strings, for os/exec's Cmd.Env (after
// the parent's environment: later entries win).
func (s *Selection) Env() []string {
	out := make([]string, 0, len(s.Settings))
	for _, kv := range s.Settings {
		out = append(out, kv.Name+"="+kv.Value)
	}
	return out
}

// SelectEnv returns the environment that makes exactly the devices named
// by specs visible, in that order, to a child process of the runtime behind
// device type t. A spec is a UUID in the vendor's form, whole or a prefix
// one device alone has ("GPU-8a1f"); a PCI address ("0000:18:00.0", NVML's
// "00000000:18:00.0" or "18:00.0"); or an index of at most 4 digits, the
// visible index a device string of t names in this process ("1" is
// cuda:1). t may be any type a
// device string names: where cuda means flagos, or for flagos, the devices
// are those of the vendor flagos routes to, and so are the variables.
//
// The devices are read from the vendor's management library (its presence
// tier: no driver is initialized), and the variables are written as the
// runtime reads them (driver.Vendor.Visibility; docs/visible-devices.md):
// UUIDs where it takes them, else its own indexes. It runs Init first
// (ctx bounds the wait, as for Init). Errors wrap ErrSelection (a bad
// spec, each saying what was given and what exists) or ErrUndecidable.
func SelectEnv(ctx context.Context, t device.Type, specs ...string) (*Selection, error) {
	if _, err := Init(ctx); err != nil && (errors.Is(err, ErrInitPending) || errors.Is(err, ErrBadSetting)) {
		return nil, err
	}
	vt, err := vendorType(t)
	if err != nil {
		return nil, err
	}
	v, ok := vendors.Lookup(vt)
	if !ok {
		return nil, fmt.Errorf("%w: %q is no vendor's device type here", ErrSelection, vt)
	}
	return selectFrom(v, std.presenceEnv(), specs)
}

// vendorType is the vendor type t names here: t itself, or the vendor
// flagos routes to (for flagos, and for cuda aliased to flagos).
func vendorType(t device.Type) (device.Type, error) {
	b, err := device.Default.Lookup(t)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrSelection, err)
	}
	if r, ok := b.(interface {
		Route() (device.Backend, error)
	}); ok {
		vb, err := r.Route()
		if err != nil {
			return "", fmt.Errorf("%w: %s routes to no vendor backend: %w", ErrSelection, t, err)
		}
		return vb.Type(), nil
	}
	return b.Type(), nil
}

// presenceEnv is the presence tier's view of the environment and of
// FLAGOS_TEST_ROOT, as Init's settings read them.
func (s *shim) presenceEnv() *presence.Env {
	lookup := func(k string) (string, bool) {
		if v := s.getenv(k); v != "" {
			return v, true
		}
		return os.LookupEnv(k)
	}
	opts := []presence.Option{presence.WithLookupEnv(lookup), presence.WithLogger(s.log), presence.WithRoot(s.set.root)}
	if s.cfg.noShutdown {
		opts = append(opts, presence.WithoutShutdown())
	}
	return presence.NewEnv(opts...)
}

// selectFrom is SelectEnv on vendor v's sources, read through e.
func selectFrom(v *driver.Vendor, e *presence.Env, specs []string) (*Selection, error) {
	if v.Visibility == nil {
		return nil, fmt.Errorf("%w: how %s's runtime reads its visible-devices variables is not known to flagshim", ErrUndecidable, v.Type)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: no device given: name devices by UUID, PCI address or index", ErrSelection)
	}
	var reports []presence.Report
	switch {
	case v.Presence != nil:
		reports = v.Presence(e)
	case len(v.DeviceNodes.Prefixes) > 0:
		reports = []presence.Report{presence.Nodes(v.DeviceNodes, e)}
	}
	var r *presence.Report
	var tried []string
	for i := range reports {
		if len(reports[i].All) > 0 {
			r = &reports[i]
			break
		}
		tried = append(tried, reports[i].Source+": "+reports[i].Reason)
	}
	if r == nil {
		return nil, fmt.Errorf("%w: no %s device is listed here (%s)", ErrSelection, v.Type, strings.Join(tried, "; "))
	}
	sel := &Selection{Type: v.Type, Runtime: v.Visibility.Runtime, Source: r.Source}
	all := presence.AsVisible(r.All)
	var mapping *visible.Mapping // the current environment's, computed for the first index given
	want := make([]int, 0, len(specs))
	for _, spec := range specs {
		i, err := find(v, r, spec, func() (*visible.Mapping, error) {
			if mapping == nil {
				m, err := v.Visibility.Resolve(all, e.Lookup)
				if err != nil {
					return nil, err
				}
				mapping = &m
			}
			return mapping, nil
		})
		if err != nil {
			return nil, err
		}
		want = append(want, i)
		d := r.All[i]
		sel.Devices = append(sel.Devices, SelectedDevice{Spec: spec, Name: d.Name, UUID: d.UUID, PCIBusID: d.PCIBusID, SourceIndex: d.SourceIndex})
	}
	settings, err := v.Visibility.Select(all, want, e.Lookup)
	if err != nil {
		return nil, err
	}
	sel.Settings = settings
	if mapping != nil {
		sel.Notes = append(sel.Notes, mapping.Notes...)
	}
	return sel, nil
}

// find is the position in r.All of the device spec names.
func find(v *driver.Vendor, r *presence.Report, spec string, mapping func() (*visible.Mapping, error)) (int, error) {
	spec = strings.TrimSpace(spec)
	switch {
	case spec == "":
		return -1, fmt.Errorf("%w: an empty device: give a UUID, a PCI address or an index", ErrSelection)
	case isIndex(spec):
		n, err := strconv.Atoi(spec)
		m, merr := mapping()
		if merr != nil {
			return -1, fmt.Errorf("index %s: the devices visible here cannot be decided: %w", spec, merr)
		}
		if err != nil || n >= len(m.Visible) {
			return -1, fmt.Errorf("%w: index %s is out of range: %d %s device(s) are visible here%s", ErrSelection, spec, len(m.Visible), v.Type, appliedNote(m))
		}
		return m.Visible[n], nil
	}
	if _, ok := visible.ParsePCIBusID(spec); ok && strings.Contains(spec, ":") {
		var hits []int
		for i, d := range r.All {
			if d.Parent == "" && visible.SamePCI(d.PCIBusID, spec) {
				hits = append(hits, i)
			}
		}
		return one(spec, "PCI address", hits, r)
	}
	var exact, prefix []int
	for i, d := range r.All {
		for _, u := range []string{d.UUID, strings.TrimPrefix(d.UUID, v.UUIDPrefix)} {
			switch {
			case u == "":
			case strings.EqualFold(u, spec):
				exact = append(exact, i)
			case len(spec) <= len(u) && strings.EqualFold(u[:len(spec)], spec):
				prefix = append(prefix, i)
			default:
				continue
			}
			break
		}
	}
	if len(exact) > 0 {
		return one(spec, "UUID", exact, r)
	}
	return one(spec, "UUID", prefix, r)
}

// one is the one device of hits; an error naming the spec otherwise.
func one(spec, what string, hits []int, r *presence.Report) (int, error) {
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return -1, fmt.Errorf("%w: no device has the %s %q (%s lists %d: %s)", ErrSelection, what, spec, r.Source, len(r.All), listed(r))
	}
	var ids []string
	for _, i := range hits {
		ids = append(ids, r.All[i].UUID)
	}
	return -1, fmt.Errorf("%w: the %s %q is ambiguous: %d devices have it (%s); give more of it", ErrSelection, what, spec, len(hits), strings.Join(ids, ", "))
}

// listed names the devices of r for an error: their UUIDs, else their PCI
// addresses, else their indexes.
func listed(r *presence.Report) string {
	var out []string
	for i, d := range r.All {
		switch {
		case len(out) == 8:
			return strings.Join(out, ", ") + ", ..."
		case d.UUID != "":
			out = append(out, d.UUID)
		case d.PCIBusID != "":
			out = append(out, d.PCIBusID)
		default:
			out = append(out, strconv.Itoa(i))
		}
	}
	return strings.Join(out, ", ")
}

func appliedNote(m *visible.Mapping) string {
	if m.Applied == "" {
		return ""
	}
	return " through " + m.Applied
}

// isIndex reports whether s is an index: at most 4 decimal digits (no
// device count reaches 10000: device.MaxDevices); a longer number is a
// UUID prefix (MTML's and CNDev's UUIDs have no letters before their first
// dash).
func isIndex(s string) bool {
	if len(s) > 4 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
