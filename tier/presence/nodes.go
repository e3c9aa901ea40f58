package presence

// Device nodes: the files a runtime opens to reach its GPUs. Stat-ing them
// opens nothing. Only character devices count (a leftover regular file or
// folder of the same name does not). Each vendor package says where its
// nodes are (a NodeSpec); a node says a GPU is attached to this machine or
// container, not that its runtime works.

import (
	"fmt"
	"path"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/visible"
)

// NodeSpec says where a vendor's per-device nodes are and which variable
// hides devices.
type NodeSpec struct {
	What     string   // for messages: "/dev/nvidia*"
	Dir      string   // the folder: "/dev"
	Prefixes []string // each node is Dir/<prefix><N>: "nvidia" (nvidiactl is not numbered, so not a GPU)
	// Control are nodes the runtime needs besides the per-device ones
	// ("/dev/nvidiactl"); one that is missing is noted.
	Control []string
	// Visible is the visibility variable, read with CUDA_VISIBLE_DEVICES'
	// rules (see Visible); "" when the vendor has none.
	Visible string
	// Rules, when set, are the runtime's visibility rules, applied in
	// Visible's place (Env.VisibleRules).
	Rules *visible.Rules
}

// Nodes counts the vendor's device nodes under the root, then applies the
// visibility variable (ordinals only: the nodes carry no UUID, so a UUID
// list is ErrUndecidable). It is the fallback where the management library
// is missing. Devices come in prefix order, then node-number order.
func Nodes(spec NodeSpec, e *Env) (r Report) {
	r.Source = SourceNodes
	defer Guard(&r)
	var all []Device
	for _, p := range spec.Prefixes {
		all = append(all, e.CharNodes(spec.Dir, p)...)
	}
	if len(all) > 0 {
		for _, c := range spec.Control {
			if !e.IsCharDevice(c) {
				r.Notes = append(r.Notes, e.Path(c)+" is missing: the runtime needs it")
			}
		}
	}
	vis := e.VisibleBy(spec.Visible)
	if spec.Rules != nil {
		vis = e.VisibleRules(spec.Rules)
	}
	return e.finishNodes(spec.What, all, r, vis)
}

// VisibleBy applies the variable name with CUDA_VISIBLE_DEVICES' rules
// (Visible) to every device; "" applies nothing.
func (e *Env) VisibleBy(name string) func([]Device) ([]Device, string, error) {
	return func(all []Device) ([]Device, string, error) {
		if name == "" {
			return all, "", nil
		}
		value, set := e.Lookup(name)
		devs, err := Visible(all, value, set)
		return devs, Visibility(name, value, set), err
	}
}

// finishNodes numbers all, applies the visibility variables and says what
// was found.
func (e *Env) finishNodes(what string, all []Device, r Report, visible func([]Device) ([]Device, string, error)) Report {
	if !CheckCount(&r, what, "the device folder", uint64(len(all))) {
		return r
	}
	for i := range all {
		all[i].Index = i
	}
	r.Total = len(all)
	r.All = all
	devs, applied, err := visible(all)
	r.Visibility = applied
	if err != nil {
		r.Err = err
		r.Reason = fmt.Sprintf("%d %s node%s, but %s cannot be resolved from device nodes: %v", r.Total, what, Plural(r.Total), r.Visibility, err)
		return r
	}
	r.Devices = devs
	r.Reason = CountReason(what, r.Total, len(devs), r.Visibility)
	e.log.Debug("presence: device nodes", zap.String("what", what), zap.Int("total", r.Total), zap.Int("visible", len(devs)))
	return r
}

// NodesOf is Nodes for device nodes a vendor found its own way (AMD's
// render nodes, kept by their kernel driver): it numbers them, applies
// visible (the vendor's visibility rules: the applied variables, or an
// error) and says what was found.
func NodesOf(what string, devs []Device, notes []string, visible func([]Device) ([]Device, string, error), e *Env) (r Report) {
	r.Source, r.Notes = SourceNodes, notes
	defer Guard(&r)
	return e.finishNodes(what, devs, r, visible)
}

// CharNodes are the character devices dir/prefixN under the root, in
// number order; Node holds each one's path.
func (e *Env) CharNodes(dir, prefix string) []Device {
	ents, err := e.Numbered(dir, prefix)
	if err != nil {
		return nil
	}
	var out []Device
	for _, ent := range ents {
		p := path.Join(dir, ent.Name)
		if e.IsCharDevice(p) {
			out = append(out, Device{SourceIndex: ent.N, Node: e.Path(p)})
		}
	}
	return out
}
