package cdi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MaxSize bounds a spec file read (a spec of 4096 devices is about 2 MiB).
const MaxSize = 8 << 20

// Format is how a spec is written: YAML or JSON.
type Format string

// The formats.
const (
	YAML Format = "yaml"
	JSON Format = "json"
)

// ParseFormat reads a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case YAML, JSON:
		return f, nil
	}
	return "", fmt.Errorf("format %q: want yaml or json", s)
}

// FormatOf is the format of data: JSON where its first character that is
// not a space is '{', YAML otherwise.
func FormatOf(data []byte) Format {
	if t := bytes.TrimLeft(data, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '{' {
		return JSON
	}
	return YAML
}

// Encode is s in format f, ending with a newline.
func Encode(s *Spec, f Format) ([]byte, error) {
	if f == JSON {
		b, err := json.MarshalIndent(s, "", "  ")
		return append(b, '\n'), err
	}
	return yamlOf(s)
}

// knownVersions are the cdiVersion values the CNCF library accepts
// (specs-go/version.go).
var knownVersions = []string{"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"}

// Parse reads a CDI spec, YAML or JSON, as the CNCF library does: unknown
// fields, an unknown cdiVersion, a version lower than the spec's content
// needs, a kind or device name CDI does not allow, no devices or a device
// twice are errors (ErrNotCDI, ErrBadDevice). The kind may be any CDI kind;
// TypeOf says whether it is one of flagshim's.
func Parse(data []byte) (*Spec, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d a spec may have", ErrNotCDI, len(data), MaxSize)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var s Spec
	if FormatOf(data) == JSON {
		if err := decodeStrict(data, &s); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotCDI, err)
		}
	} else {
		t, err := parseYAML(data)
		if err != nil {
			return nil, err
		}
		if t.kind != 'm' {
			return nil, fmt.Errorf("%w: the document is not a map of cdiVersion, kind and devices", ErrNotCDI)
		}
		var b bytes.Buffer
		treeJSON(&b, t)
		if err := decodeStrict(b.Bytes(), &s); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotCDI, err)
		}
	}
	s.normalize()
	if err := s.validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// normalize makes empty lists and JSON nulls absent, as writing them
// would.
func (s *Spec) normalize() {
	raw := func(r *json.RawMessage) {
		if t := bytes.TrimSpace(*r); len(t) == 0 || string(t) == "null" {
			*r = nil
		}
	}
	edits := func(e *ContainerEdits) {
		if len(e.Env) == 0 {
			e.Env = nil
		}
		if len(e.DeviceNodes) == 0 {
			e.DeviceNodes = nil
		}
		if len(e.Mounts) == 0 {
			e.Mounts = nil
		}
		for i := range e.Mounts {
			if len(e.Mounts[i].Options) == 0 {
				e.Mounts[i].Options = nil
			}
		}
		for _, r := range []*json.RawMessage{&e.NetDevices, &e.Hooks, &e.IntelRdt, &e.AdditionalGIDs} {
			raw(r)
		}
	}
	raw(&s.Annotations)
	edits(&s.ContainerEdits)
	for i := range s.Devices {
		raw(&s.Devices[i].Annotations)
		edits(&s.Devices[i].ContainerEdits)
	}
}

// check is what the CNCF library's ContainerEdits.Validate refuses: a
// variable without a name, a node or mount without its paths, a node type
// or permissions it does not know.
func (e *ContainerEdits) check() error {
	for _, kv := range e.Env {
		if strings.IndexByte(kv, '=') <= 0 {
			return fmt.Errorf("%w: the variable %q has no name=value", ErrNotCDI, kv)
		}
	}
	for _, n := range e.DeviceNodes {
		switch {
		case n.Path == "":
			return fmt.Errorf("%w: a device node without a path", ErrNotCDI)
		case !slices.Contains([]string{"", "b", "c", "u", "p"}, n.Type):
			return fmt.Errorf("%w: device node %s: type %q is none of b, c, u, p", ErrNotCDI, n.Path, n.Type)
		case strings.Trim(n.Permissions, "rwm") != "":
			return fmt.Errorf("%w: device node %s: permissions %q are not of r, w, m", ErrNotCDI, n.Path, n.Permissions)
		}
	}
	for _, m := range e.Mounts {
		if m.HostPath == "" || m.ContainerPath == "" {
			return fmt.Errorf("%w: a mount without its hostPath or containerPath", ErrNotCDI)
		}
	}
	return nil
}

func (e *ContainerEdits) empty() bool {
	return len(e.Env) == 0 && len(e.DeviceNodes) == 0 && len(e.Mounts) == 0 && len(e.Hooks) == 0 &&
		len(e.NetDevices) == 0 && len(e.IntelRdt) == 0 && len(e.AdditionalGIDs) == 0
}

func (s *Spec) validate() error {
	v := strings.TrimPrefix(string(s.Version), "v")
	switch {
	case s.Version == "":
		return fmt.Errorf("%w: no cdiVersion", ErrNotCDI)
	case !slices.Contains(knownVersions, v):
		return fmt.Errorf("%w: cdiVersion %q is none of %s", ErrNotCDI, s.Version, strings.Join(knownVersions, ", "))
	case s.Kind == "":
		return fmt.Errorf("%w: no kind", ErrNotCDI)
	}
	vendor, class, ok := strings.Cut(s.Kind, "/")
	if !ok || validName(vendor, false) != nil || validName(class, false) != nil {
		return fmt.Errorf("%w: kind %q is not <vendor>/<class> of letters, digits, '_', '-' and '.'", ErrBadKind, s.Kind)
	}
	if len(s.Devices) == 0 {
		return fmt.Errorf("%w: no devices", ErrNotCDI)
	}
	seen := map[Text]bool{}
	for _, d := range s.Devices {
		if err := validName(string(d.Name), true); err != nil {
			return fmt.Errorf("%w: %v", ErrBadDevice, err)
		}
		if seen[d.Name] {
			return fmt.Errorf("%w: device %q twice", ErrBadDevice, d.Name)
		}
		seen[d.Name] = true
		if d.ContainerEdits.empty() {
			return fmt.Errorf("%w: device %q edits nothing", ErrNotCDI, d.Name)
		}
		if err := d.ContainerEdits.check(); err != nil {
			return err
		}
	}
	if err := s.ContainerEdits.check(); err != nil {
		return err
	}
	if min := MinimumVersion(s); versionLess(v, min) {
		return fmt.Errorf("%w: cdiVersion %s is lower than the %s its content needs", ErrNotCDI, v, min)
	}
	return nil
}

func versionLess(a, b string) bool {
	return slices.Index(knownVersions, a) < slices.Index(knownVersions, b)
}

// WriteFile writes data to path atomically: a temporary file in the same
// folder (a dot file with no .yaml or .json suffix, which CDI's and NFD's
// readers skip), synced, then renamed over path, so that a reader sees the
// old file or the new one, never a part. On any error path is left as it
// was and the temporary file is removed. The file's mode is 0644.
func WriteFile(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder", path)
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// FileName is the file name CDI's own tools give a spec of kind in format
// f: "flagos.ai-cuda.yaml" (pkg/cdi/spec.go GenerateSpecName: vendor-class).
func FileName(kind string, f Format) string {
	return strings.ReplaceAll(kind, "/", "-") + "." + string(f)
}
