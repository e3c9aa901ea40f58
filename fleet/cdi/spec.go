package cdi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The types of a CDI spec: the fields of the CNCF specification
// (tags.cncf.io/container-device-interface specs-go/config.go, SPEC.md),
// with its JSON names, so that a spec flagshim writes is read by every
// runtime and a spec any tool wrote is read here. flagshim writes Env,
// DeviceNodes (Path, HostPath) and Mounts; the other fields are read so
// that a spec carrying them is still CDI, and compared as they are.

// Spec is one CDI spec: the devices of one kind.
type Spec struct {
	Version        Text            `json:"cdiVersion"`
	Kind           string          `json:"kind"`
	Annotations    json.RawMessage `json:"annotations,omitempty"` // 0.6.0
	Devices        []Device        `json:"devices"`
	ContainerEdits ContainerEdits  `json:"containerEdits,omitempty"`
}

// Device is one device a container can be given: "flagos.ai/cuda=0".
type Device struct {
	Name           Text            `json:"name"`
	Annotations    json.RawMessage `json:"annotations,omitempty"` // 0.6.0
	ContainerEdits ContainerEdits  `json:"containerEdits"`
}

// ContainerEdits are the changes a runtime makes to a container's OCI spec.
type ContainerEdits struct {
	Env            []string        `json:"env,omitempty"`
	DeviceNodes    []DeviceNode    `json:"deviceNodes,omitempty"`
	NetDevices     json.RawMessage `json:"netDevices,omitempty"` // 1.1.0
	Hooks          json.RawMessage `json:"hooks,omitempty"`
	Mounts         []Mount         `json:"mounts,omitempty"`
	IntelRdt       json.RawMessage `json:"intelRdt,omitempty"`       // 0.7.0
	AdditionalGIDs json.RawMessage `json:"additionalGids,omitempty"` // 0.7.0
}

// DeviceNode is a device node to create in the container.
type DeviceNode struct {
	Path        string  `json:"path"`
	HostPath    string  `json:"hostPath,omitempty"` // 0.5.0
	Type        string  `json:"type,omitempty"`
	Major       int64   `json:"major,omitempty"`
	Minor       int64   `json:"minor,omitempty"`
	FileMode    *uint32 `json:"fileMode,omitempty"`
	Permissions string  `json:"permissions,omitempty"`
	UID         *uint32 `json:"uid,omitempty"`
	GID         *uint32 `json:"gid,omitempty"`
}

// Mount is a bind mount into the container.
type Mount struct {
	HostPath      string   `json:"hostPath"`
	ContainerPath string   `json:"containerPath"`
	Options       []string `json:"options,omitempty"`
	Type          string   `json:"type,omitempty"` // 0.4.0
}

// Text is a string that a YAML writer may have left unquoted as a number
// (a device named 0, cdiVersion 1): it reads a JSON number as its text.
type Text string

// UnmarshalJSON reads a JSON string or number.
func (t *Text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a string, got %s", b)
	}
	*t = Text(n.String())
	return nil
}

// Vendor is the vendor part of every kind flagshim writes: the domain of
// the FlagOS project. A kind is "flagos.ai/<device type>": flagos.ai/cuda,
// flagos.ai/musa. CDI's rule is "<vendor>/<class>" with a vendor that is a
// domain its owner controls (SPEC.md: "vendor.com/device"), as nvidia.com/gpu
// and amd.com/gpu are; the class is flagshim's device type, the name a
// device string uses.
const Vendor = "flagos.ai"

// Kind is the CDI kind of the device type t: "flagos.ai/cuda".
func Kind(t string) string { return Vendor + "/" + t }

// TypeOf is the device type of a kind flagshim writes ("flagos.ai/cuda":
// "cuda"), or an error that says why kind is not one.
func TypeOf(kind string) (string, error) {
	v, class, ok := strings.Cut(kind, "/")
	switch {
	case !ok:
		return "", fmt.Errorf("%w: kind %q is not <vendor>/<class>", ErrNotCDI, kind)
	case v != Vendor:
		return "", fmt.Errorf("%w: kind %q is not one flagshim writes (flagos.ai/<device type>)", ErrBadKind, kind)
	case validName(class, false) != nil:
		return "", fmt.Errorf("%w: kind %q: class %q: %v", ErrBadKind, kind, class, validName(class, false))
	}
	return class, nil
}

// validName checks a CDI vendor or class name (device false) or device
// name (device true): ASCII letters, digits, '_', '-', '.' (and ':' in a
// device name), starting with a letter (a letter or digit for a device)
// and ending with a letter or digit (tags.cncf.io/container-device-interface
// pkg/parser/parser.go, ValidateClassName and ValidateDeviceName).
func validName(s string, device bool) error {
	if s == "" {
		return fmt.Errorf("empty name")
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	letter := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	if !letter(s[0]) && !(device && alnum(s[0])) {
		return fmt.Errorf("%q does not start with a letter%s", s, map[bool]string{true: " or digit"}[device])
	}
	if !alnum(s[len(s)-1]) {
		return fmt.Errorf("%q does not end with a letter or digit", s)
	}
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		if !alnum(c) && c != '_' && c != '-' && c != '.' && !(device && c == ':') {
			return fmt.Errorf("%q holds %s, which a CDI name may not", s, strconv.QuoteRune(rune(c)))
		}
	}
	return nil
}

// MinimumVersion is the lowest cdiVersion that expresses s, by the CNCF
// library's rules (specs-go/version.go, requiresV040 ... requiresV110):
// 0.3.0, the earliest it reads; 0.4.0 for a mount's type; 0.5.0 for a
// device name that starts with a digit (an index: "0") or a node's
// hostPath; 0.6.0 for annotations or a dot in the class; 0.7.0 for
// additional GIDs or Intel RDT; 1.1.0 for net devices. Podman 4.3 resolves
// specs up to 0.5.0.
func MinimumVersion(s *Spec) string {
	edits := []*ContainerEdits{&s.ContainerEdits}
	for i := range s.Devices {
		edits = append(edits, &s.Devices[i].ContainerEdits)
	}
	v := "0.3.0"
	raise := func(to string) {
		if to > v { // the versions compare as text: one digit each
			v = to
		}
	}
	_, class, _ := strings.Cut(s.Kind, "/")
	if len(s.Annotations) > 0 || strings.Contains(class, ".") {
		raise("0.6.0")
	}
	for _, d := range s.Devices {
		if len(d.Annotations) > 0 {
			raise("0.6.0")
		}
		if n := string(d.Name); n != "" && '0' <= n[0] && n[0] <= '9' {
			raise("0.5.0")
		}
	}
	for _, e := range edits {
		if len(e.NetDevices) > 0 && string(e.NetDevices) != "[]" && string(e.NetDevices) != "null" {
			raise("1.1.0")
		}
		if len(e.IntelRdt) > 0 || len(e.AdditionalGIDs) > 0 && string(e.AdditionalGIDs) != "[]" {
			raise("0.7.0")
		}
		for _, n := range e.DeviceNodes {
			if n.HostPath != "" {
				raise("0.5.0")
			}
		}
		for _, m := range e.Mounts {
			if m.Type != "" {
				raise("0.4.0")
			}
		}
	}
	return v
}
