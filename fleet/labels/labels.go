// Package labels turns what flagshim found on a node into Kubernetes node
// labels through Node Feature Discovery (NFD): the lines of a local feature
// file, which nfd-worker reads from its features.d folder
// (/etc/kubernetes/node-feature-discovery/features.d/) and publishes as the
// node's labels. NFD's documented format (kubernetes-sigs/node-feature-
// discovery docs/usage/customization-guide.md, "Local feature source",
// "Input format"): one "<namespace>/<name>[=<value>]" per line, "#"
// comments; nfd-master accepts a label whose key is a Kubernetes qualified
// name with a namespace other than kubernetes.io and whose value is a
// Kubernetes label value (pkg/apis/nfd/validate/validate.go, Label).
//
// Every label is under flagos.ai/. Names and values come from drivers
// (model names) and are sanitized to Kubernetes' rules: at most 63
// characters of [A-Za-z0-9._-], starting and ending with a letter or digit
// (k8s.io/apimachinery pkg/util/validation: IsQualifiedName,
// IsValidLabelValue).
package labels

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// Prefix is every label's namespace.
const Prefix = "flagos.ai/"

// MaxLen is the longest name (after the prefix) and value Kubernetes takes.
const MaxLen = 63

// Label is one line of a feature file.
type Label struct{ Name, Value string }

// String is the feature-file line: "flagos.ai/cuda.count=8".
func (l Label) String() string { return l.Name + "=" + l.Value }

// FromReport labels what info says, sorted by name:
//
//	flagos.ai/vendor          whose accelerators the node has (the maker of the
//	                          available vendor backends; "mixed" for several,
//	                          "none" when there is none)
//	flagos.ai/cuda-aliased    whether cuda is aliased to flagos here
//	flagos.ai/tier            the probe tier that answered
//	flagos.ai/<type>.count    per available vendor backend: its devices,
//	flagos.ai/<type>.model    their model ("mixed" when they differ),
//	flagos.ai/<type>.driver-version  the driver's version,
//	flagos.ai/<type>.vendor   whose runtime answered (behind a CUDA-compatible
//	                          libcuda: the maker of that runtime),
//	flagos.ai/<type>.tier     the tier that answered for it
//	flagos.ai/flagos.routes-to  the vendor backend flagos routes to
func FromReport(info report.Info) []Label {
	var out []Label
	add := func(name, value string) { out = append(out, Label{Name(name), Value(value)}) }
	makers := map[string]bool{}
	var firstMaker string
	for _, be := range info.Backends {
		if !be.Available || be.Type == device.CPU {
			continue
		}
		t := string(be.Type)
		if be.Type == device.FlagOS {
			if be.RoutesTo != "" {
				add("flagos.routes-to", string(be.RoutesTo))
			}
			continue
		}
		add(t+".count", strconv.Itoa(be.Devices))
		add(t+".model", model(be.Properties))
		add(t+".driver-version", be.DriverVersion)
		add(t+".vendor", be.Vendor)
		add(t+".tier", string(be.Tier))
		if be.Vendor != "" && !makers[be.Vendor] {
			makers[be.Vendor] = true
			if firstMaker == "" {
				firstMaker = be.Vendor
			}
		}
	}
	switch len(makers) {
	case 0:
		add("vendor", "none")
	case 1:
		add("vendor", firstMaker)
	default:
		add("vendor", "mixed")
	}
	add("cuda-aliased", strconv.FormatBool(info.Alias.Active))
	add("tier", string(info.Probe))
	sortLabels(out)
	return out
}

func model(ps []report.Device) string {
	m := ""
	for i, p := range ps {
		if i > 0 && p.Name != m {
			return "mixed"
		}
		m = p.Name
	}
	return m
}

func sortLabels(ls []Label) {
	slices.SortStableFunc(ls, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
}

// Write writes the labels as a feature file: a comment naming its writer,
// then one line per label.
func Write(w io.Writer, ls []Label) error {
	var b strings.Builder
	b.WriteString("# flagshim labels: the accelerators of this node, for Node Feature Discovery\n")
	for _, l := range ls {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Name is flagos.ai/ and s as a label name: Sanitize(s), "unknown" when
// nothing is left.
func Name(s string) string {
	n := Sanitize(s)
	if n == "" {
		n = "unknown"
	}
	return Prefix + n
}

// Value is s as a label value: Sanitize(s) ("" stays empty, which
// Kubernetes allows).
func Value(s string) string { return Sanitize(s) }

// Sanitize makes s a label name or value: every run of characters other
// than ASCII letters, digits, '.', '_' and '-' becomes one '-' ("NVIDIA
// H100 80GB HBM3" is "NVIDIA-H100-80GB-HBM3"), then what does not start
// or end with a letter or digit is trimmed, and the result is cut to
// MaxLen characters (and trimmed again).
func Sanitize(s string) string {
	var b strings.Builder
	dash := false
	for i := 0; i < len(s) && b.Len() <= 4*MaxLen; i++ {
		c := s[i]
		switch {
		case alnum(c) || c == '.' || c == '_' || c == '-':
			b.WriteByte(c)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	out := trim(b.String())
	if len(out) > MaxLen {
		out = trim(out[:MaxLen])
	}
	return out
}

func alnum(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

func trim(s string) string {
	for s != "" && !alnum(s[0]) {
		s = s[1:]
	}
	for s != "" && !alnum(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// Check reports what makes l no label Kubernetes accepts under NFD's rules
// (the documented grammar above); nil when it is one.
func Check(l Label) error {
	name, ok := strings.CutPrefix(l.Name, Prefix)
	switch {
	case !ok:
		return fmt.Errorf("label %q is not under %s", l.Name, Prefix)
	case name == "" || len(name) > MaxLen || Sanitize(name) != name:
		return fmt.Errorf("label name %q is not 1 to %d characters of [A-Za-z0-9._-] starting and ending with a letter or digit", name, MaxLen)
	case len(l.Value) > MaxLen || Sanitize(l.Value) != l.Value:
		return fmt.Errorf("label %s's value %q is not 0 to %d characters of [A-Za-z0-9._-] starting and ending with a letter or digit", l.Name, l.Value, MaxLen)
	}
	return nil
}
