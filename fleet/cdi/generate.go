package cdi

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// Errors; test them with errors.Is.
var (
	// ErrNotCDI: the input is not a CDI spec (not YAML or JSON of one, no
	// kind, no devices).
	ErrNotCDI = errors.New("cdi: not a CDI spec")
	// ErrBadKind: the kind is not flagos.ai/<device type>, or names a type
	// flagshim does not know.
	ErrBadKind = errors.New("cdi: not a kind flagshim writes")
	// ErrBadDevice: a device name CDI does not allow.
	ErrBadDevice = errors.New("cdi: bad device name")
	// ErrNothing: there is nothing to inject: no device, no node and no
	// variable (a CDI device needs at least one edit).
	ErrNothing = errors.New("cdi: nothing to inject")
)

// Source is what is known of one vendor now: its description, the driver
// library a tier found and its devices in visible order.
type Source struct {
	Vendor  *driver.Vendor
	Library string             // the driver library found (a path the search chose); "" when none
	Devices []driver.DeviceRef // the visible devices, in visible order
}

// FromBackend is the Source of a driver-core backend, from the answer of
// its tier (no driver is initialized beyond what that tier does): the
// library it found and each device's UUID and PCI bus id. A backend that
// is not available has no devices; its library is searched (found and
// checked, never opened) when its tier names none.
func FromBackend(b *driver.Backend) Source {
	s := Source{Vendor: b.Vendor(), Library: b.Describe().Library}
	if s.Library == "" {
		s.Library = b.FindLibrary().Path
	}
	r := b.Available()
	if !r.Available {
		return s
	}
	n := min(r.Devices, device.MaxDevices)
	for i := 0; i < n; i++ {
		p, err := b.Properties(i)
		if err != nil {
			continue
		}
		bus, _ := b.PCIBusID(i)
		s.Devices = append(s.Devices, driver.DeviceRef{Index: i, UUID: p.UUID, PCIBusID: bus})
	}
	return s
}

// Options say where the machine is read.
type Options struct {
	// Root is the folder under which /dev, /sys and /proc are read ("" is
	// /; FLAGOS_TEST_ROOT in tests). A node found under another root is
	// injected from there (hostPath) at its path in the container.
	Root string
	// LookupEnv reads the library overrides (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

func (o Options) env() *presence.Env {
	return presence.NewEnv(presence.WithRoot(o.Root), presence.WithLookupEnv(o.LookupEnv))
}

// Generate is the CDI spec of src: kind flagos.ai/<type>; one device per
// visible index ("0") and per UUID, and "all"; the vendor's control nodes
// and libraries (each real file and its soname links, read-only at the same
// path) in the spec's own edits, which a runtime applies once whichever of
// its devices a container gets; each device's nodes and the vendor's
// visible-devices variable naming it by UUID in the device's edits. Notes
// say what was left out and why. Its cdiVersion is the lowest that
// expresses it (MinimumVersion).
func Generate(src Source, o Options) (spec *Spec, notes []string, err error) {
	v := src.Vendor
	if v == nil {
		return nil, nil, fmt.Errorf("cdi: no vendor")
	}
	e := o.env()
	c := v.Container
	spec = &Spec{Kind: Kind(string(v.Type)), Devices: []Device{}}
	t := string(v.Type)
	note := func(format string, args ...any) { notes = append(notes, t+": "+fmt.Sprintf(format, args...)) }

	for _, n := range c.Control {
		if e.IsCharDevice(n) {
			spec.ContainerEdits.DeviceNodes = append(spec.ContainerEdits.DeviceNodes, node(e, n))
		}
	}
	spec.ContainerEdits.Mounts, notes = libraries(src, e, notes)

	var all []string // every injected device's nodes, in order
	var uuids []string
	var byUUID []Device // after the devices named by index
	injected := 0       // devices whose nodes are known, or every device where the nodes are not told apart
	var nodesOf [][]string
	var errsOf []error
	if c.Nodes != nil {
		var err error
		if nodesOf, errsOf, err = c.NodesOf(e, src.Devices); err != nil {
			return nil, notes, fmt.Errorf("cdi: %s: %w", t, err)
		}
		if len(nodesOf) != len(src.Devices) || len(errsOf) != len(src.Devices) {
			return nil, notes, fmt.Errorf("cdi: %s's Container.Nodes answered %d nodes and %d errors for %d devices", t, len(nodesOf), len(errsOf), len(src.Devices))
		}
	}
	for i, d := range src.Devices {
		if c.Nodes == nil {
			injected++
			if d.UUID != "" {
				uuids = append(uuids, d.UUID)
			}
			continue
		}
		nodes, err := nodesOf[i], errsOf[i]
		if err != nil {
			note("device %d (UUID %q) is left out: %v", d.Index, d.UUID, err)
			continue
		}
		injected++
		if d.UUID != "" {
			uuids = append(uuids, d.UUID)
		}
		edits := ContainerEdits{}
		for _, n := range nodes {
			edits.DeviceNodes = append(edits.DeviceNodes, node(e, n))
			if !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
		if c.VisibleEnv != "" && d.UUID != "" {
			edits.Env = []string{c.VisibleEnv + "=" + d.UUID}
		}
		spec.Devices = append(spec.Devices, Device{Name: Text(strconv.Itoa(d.Index)), ContainerEdits: edits})
		switch {
		case d.UUID == "":
			note("device %d has no UUID: it is named by its index only", d.Index)
		case validName(d.UUID, true) != nil:
			note("device %d: its UUID is not a CDI device name (%v): it is named by its index only", d.Index, validName(d.UUID, true))
		default:
			byUUID = append(byUUID, Device{Name: Text(d.UUID), ContainerEdits: edits})
		}
	}
	spec.Devices = append(spec.Devices, byUUID...)
	if c.Nodes == nil {
		if len(src.Devices) > 0 {
			note("which device node is which device is not known: only \"all\" is written")
		}
		for _, p := range v.DeviceNodes.Prefixes {
			for _, d := range e.CharNodes(v.DeviceNodes.Dir, p) {
				all = append(all, strings.TrimPrefix(d.Node, strings.TrimSuffix(e.Path("/"), "/")))
			}
		}
	}
	allEdits := ContainerEdits{}
	for _, n := range all {
		allEdits.DeviceNodes = append(allEdits.DeviceNodes, node(e, n))
	}
	switch {
	case c.VisibleEnv == "":
	case len(uuids) == injected:
		allEdits.Env = []string{c.VisibleEnv + "=" + strings.Join(uuids, ",")}
	default:
		note("%s is not set by \"all\": %d of %d devices have no UUID", c.VisibleEnv, injected-len(uuids), injected)
	}
	if len(allEdits.DeviceNodes) == 0 && len(allEdits.Env) == 0 {
		return nil, notes, fmt.Errorf("%w: %s has no device node here and no visible-devices variable that takes UUIDs", ErrNothing, t)
	}
	spec.Devices = append(spec.Devices, Device{Name: "all", ContainerEdits: allEdits})
	spec.Version = Text(MinimumVersion(spec))
	return spec, notes, nil
}

// node is the DeviceNode of the node p (a path in the container); where the
// root is not /, the host's node is under it.
func node(e *presence.Env, p string) DeviceNode {
	n := DeviceNode{Path: p}
	if host := e.Path(p); host != p {
		n.HostPath = host
	}
	return n
}

// mountOptions are those nvidia-ctk gives a library's mount
// (NVIDIA/nvidia-container-toolkit internal/discover/mounts.go).
var mountOptions = []string{"ro", "nosuid", "nodev", "rbind", "rprivate"}

// libraries are the mounts of the driver library, its companions and the
// vendor's other libraries, each found and checked as the tiers find them.
func libraries(src Source, e *presence.Env, notes []string) ([]Mount, []string) {
	t := string(src.Vendor.Type)
	var paths []string
	add := func(ps []string) {
		for _, p := range ps {
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	if src.Library != "" {
		files, real, err := Links(src.Library)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: the driver library %s is left out: %v", t, src.Library, err))
		} else {
			add(files)
			patterns, err := src.Vendor.Container.CompanionsOf(real)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: the driver's other files are left out: %v", t, err))
			}
			for _, pattern := range patterns {
				ms, _ := globFiles(pattern)
				for _, m := range ms {
					if m == real {
						continue
					}
					if fs, _, err := Links(m); err == nil {
						add(fs)
					} else {
						notes = append(notes, fmt.Sprintf("%s: %s is left out: %v", t, m, err))
					}
				}
			}
		}
	}
	for _, lib := range src.Vendor.Container.Libraries {
		path, _, err := lib.Find(e.Getenv)
		if err != nil {
			continue // not here: nothing to mount
		}
		if fs, _, err := Links(path); err == nil {
			add(fs)
		} else {
			notes = append(notes, fmt.Sprintf("%s: %s is left out: %v", t, path, err))
		}
	}
	mounts := make([]Mount, 0, len(paths))
	for _, p := range paths {
		mounts = append(mounts, Mount{HostPath: p, ContainerPath: p, Options: slices.Clone(mountOptions)})
	}
	return mounts, notes
}

// globFiles is filepath.Glob's regular files, sorted.
func globFiles(pattern string) ([]string, error) {
	ms, err := glob(pattern)
	var out []string
	for _, m := range ms {
		if st, err := os.Lstat(m); err == nil && st.Mode().IsRegular() {
			out = append(out, m)
		}
	}
	return out, err
}
