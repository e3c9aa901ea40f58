package cdi

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Diff compares old (a spec on disk) with now (what Generate writes for
// the machine now) and says each difference in one line, old's order
// first: a library whose path or version changed, device nodes added or
// gone, devices (by index or UUID) added or gone, the device count, a
// variable's value. nil: old is current.
func Diff(old, now *Spec) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if old.Kind != now.Kind {
		add("kind: %s in the spec, %s now", old.Kind, now.Kind)
	}
	if old.Version != now.Version {
		add("cdiVersion: %s in the spec, %s now", old.Version, now.Version)
	}
	if a, b := countIndexed(old), countIndexed(now); a != b {
		add("device count: %d in the spec, %d now", a, b)
	}
	out = append(out, diffEdits("", &old.ContainerEdits, &now.ContainerEdits)...)
	nowByName := map[Text]*Device{}
	for i := range now.Devices {
		nowByName[now.Devices[i].Name] = &now.Devices[i]
	}
	oldNames := map[Text]bool{}
	for i := range old.Devices {
		d := &old.Devices[i]
		oldNames[d.Name] = true
		n, ok := nowByName[d.Name]
		if !ok {
			add("device %s: in the spec, gone now", describe(d.Name))
			continue
		}
		out = append(out, diffEdits("device "+string(d.Name)+": ", &d.ContainerEdits, &n.ContainerEdits)...)
	}
	for _, d := range now.Devices {
		if !oldNames[d.Name] {
			add("device %s: new, not in the spec", describe(d.Name))
		}
	}
	return out
}

// describe names a device for a line: "0", or "GPU-8a1f... (a UUID)".
func describe(name Text) string {
	s := string(name)
	if _, err := strconv.Atoi(s); err == nil || s == "all" {
		return s
	}
	return s + " (by UUID)"
}

func countIndexed(s *Spec) int {
	n := 0
	for _, d := range s.Devices {
		if _, err := strconv.Atoi(string(d.Name)); err == nil {
			n++
		}
	}
	return n
}

// diffEdits compares two edits: nodes, mounts (a library whose file
// changed is one line), variables, and the fields flagshim does not write.
func diffEdits(where string, a, b *ContainerEdits) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, where+fmt.Sprintf(format, args...)) }
	nodeKey := func(n DeviceNode) string {
		if n.HostPath != "" && n.HostPath != n.Path {
			return n.Path + " (from " + n.HostPath + ")"
		}
		return n.Path
	}
	gone, added := setDiff(keys(a.DeviceNodes, nodeKey), keys(b.DeviceNodes, nodeKey))
	for _, n := range gone {
		add("device node %s: in the spec, gone now", n)
	}
	for _, n := range added {
		add("device node %s: new, not in the spec", n)
	}

	mountKey := func(m Mount) string {
		if m.HostPath != m.ContainerPath {
			return m.ContainerPath + " (from " + m.HostPath + ")"
		}
		return m.ContainerPath
	}
	gone, added = setDiff(keys(a.Mounts, mountKey), keys(b.Mounts, mountKey))
	// A library whose version or place changed: the same stem gone and new.
	for _, g := range slices.Clone(gone) {
		i := slices.IndexFunc(added, func(n string) bool { return stem(n) == stem(g) })
		if i < 0 {
			continue
		}
		add("library %s: %s in the spec, %s now", stem(g), g, added[i])
		gone = slices.DeleteFunc(gone, func(s string) bool { return s == g })
		added = slices.Delete(added, i, i+1)
	}
	for _, m := range gone {
		add("mount %s: in the spec, gone now", m)
	}
	for _, m := range added {
		add("mount %s: new, not in the spec", m)
	}
	for _, m := range a.Mounts {
		if j := slices.IndexFunc(b.Mounts, func(n Mount) bool { return mountKey(n) == mountKey(m) }); j >= 0 && !slices.Equal(m.Options, b.Mounts[j].Options) {
			add("mount %s: options %s in the spec, %s now", mountKey(m), strings.Join(m.Options, ","), strings.Join(b.Mounts[j].Options, ","))
		}
	}

	envA, envB := envMap(a.Env), envMap(b.Env)
	for _, kv := range a.Env {
		k, v, _ := strings.Cut(kv, "=")
		if nv, ok := envB[k]; !ok {
			add("%s=%s: in the spec, not set now", k, v)
		} else if *nv != v {
			add("%s: %q in the spec, %q now", k, v, *nv)
		}
	}
	for _, kv := range b.Env {
		if k, v, _ := strings.Cut(kv, "="); envA[k] == nil {
			add("%s=%s: new, not in the spec", k, v)
		}
	}
	for _, f := range []struct {
		name string
		a, b []byte
	}{{"hooks", a.Hooks, b.Hooks}, {"netDevices", a.NetDevices, b.NetDevices}, {"intelRdt", a.IntelRdt, b.IntelRdt}, {"additionalGids", a.AdditionalGIDs, b.AdditionalGIDs}} {
		if string(f.a) != string(f.b) {
			add("%s: %s in the spec, %s now", f.name, orNone(f.a), orNone(f.b))
		}
	}
	return out
}

func orNone(b []byte) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

func envMap(env []string) map[string]*string {
	m := map[string]*string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = &v
	}
	return m
}

func keys[T any](xs []T, key func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, key(x))
	}
	return out
}

// setDiff is what a has and b lacks (a's order), and what b has and a
// lacks (b's order).
func setDiff(a, b []string) (gone, added []string) {
	for _, x := range a {
		if !slices.Contains(b, x) {
			gone = append(gone, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			added = append(added, x)
		}
	}
	return gone, added
}

// stem is a library's name without its versions: "libcuda" of
// /usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05.
func stem(p string) string {
	p, _, _ = strings.Cut(p, " (from ")
	base := filepath.Base(p)
	if i := strings.Index(base, ".so"); i > 0 {
		return base[:i]
	}
	return base
}
