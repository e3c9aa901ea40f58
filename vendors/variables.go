package vendors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// owned are the variables flagshim itself reads, besides its vendors': the
// settings of Init (the root package's Variables, which a test there
// checks against this list), plugins/nvshmem's library override, the
// isolated tier's child marker and the Python package's library path.
var owned = map[string]string{
	"FLAGOS_ALIAS_CUDA":      "the cuda->flagos alias switch",
	"FLAGOS_BACKEND":         "where flagos routes",
	"FLAGOS_PROBE":           "the probe tier",
	"FLAGOS_PROBE_TIMEOUT":   "the probe timeout",
	"FLAGOS_LOG":             "the log level",
	"FLAGOS_TRACE":           "the C-call trace switch",
	"FLAGOS_TEST_ROOT":       "the tests' machine root",
	"FLAGOS_LIBNVSHMEM_PATH": "plugins/nvshmem's library override",
	"FLAGSHIM_PROBE_CHILD":   "the isolated tier's child marker",
	"FLAGSHIM_LIBRARY":       "the Python package's library path",
}

// OwnedVariables are the names flagshim keeps for itself, sorted: no
// vendor may declare one (Register refuses it with ErrOwnedVariable). Every
// other FLAGOS_ name but a library override (FLAGOS_LIB<NAME>_PATH), and
// every FLAGSHIM_ name, is kept for flagshim too.
func OwnedVariables() []string {
	out := make([]string, 0, len(owned))
	for k := range owned {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// flagshims says whether name is flagshim's own, and what it is.
func flagshims(name string) (what string, ok bool) {
	if what, ok := owned[name]; ok {
		return what, true
	}
	switch {
	case strings.HasPrefix(name, "FLAGSHIM_"):
		return "in flagshim's FLAGSHIM_ namespace", true
	case strings.HasPrefix(name, "FLAGOS_") && !(strings.HasPrefix(name, "FLAGOS_LIB") && strings.HasSuffix(name, "_PATH")):
		return "in flagshim's FLAGOS_ namespace, where vendors name only library overrides (FLAGOS_LIB<NAME>_PATH)", true
	}
	return "", false
}

// kindOf names a variable's kind for messages.
func kindOf(k driver.VarKind) string {
	switch k {
	case driver.VarLibraryPath:
		return "library override"
	case driver.VarVisible:
		return "visible-devices variable"
	}
	return "variable"
}

// ownVariables refuses a vendor variable flagshim owns, an empty one, or
// one the vendor names twice.
func ownVariables(v *driver.Vendor) error {
	seen := map[string]bool{}
	for _, x := range v.Variables() {
		if x.Name == "" {
			return fmt.Errorf("%w: vendor %q declares a %s with no name", ErrOwnedVariable, v.Type, kindOf(x.Kind))
		}
		if what, ok := flagshims(x.Name); ok {
			return fmt.Errorf("%w: vendor %q: its %s %s is flagshim's own (%s); give the vendor a variable of its own, such as FLAGOS_LIB%s_PATH for a library",
				ErrOwnedVariable, v.Type, kindOf(x.Kind), x.Name, what, strings.ToUpper(string(v.Type)))
		}
		if seen[x.Name] {
			return fmt.Errorf("%w: vendor %q declares %s twice (Library.EnvVar, Vars and VisibleEnv name each variable once)", ErrOwnedVariable, v.Type, x.Name)
		}
		seen[x.Name] = true
	}
	return nil
}

// varOwner is the registered vendor that declared a variable first: its
// place in the registration order, its type, and the variable's kind.
type varOwner struct {
	at   int
	typ  device.Type
	kind driver.VarKind
}

// othersVariables refuses a vendor variable (vars: v.Variables()) another
// registered vendor declares (owners), except a visible-devices variable
// both declare as such (CUDA_VISIBLE_DEVICES, which HIP's and MACA's
// runtimes read too). Where several conflict, it names the earliest
// registered vendor's, and of its the first of v's variables.
func othersVariables(v *driver.Vendor, vars []driver.Var, owners map[string]varOwner) error {
	var first *driver.Var
	var by varOwner
	for i, x := range vars {
		o, ok := owners[x.Name]
		if !ok || (o.kind == driver.VarVisible && x.Kind == driver.VarVisible) {
			continue
		}
		if first == nil || o.at < by.at {
			first, by = &vars[i], o
		}
	}
	if first != nil {
		return fmt.Errorf("%w: vendor %q: its %s %s is the %s vendor's %s; give the vendor a variable of its own",
			ErrOwnedVariable, v.Type, kindOf(first.Kind), first.Name, by.typ, kindOf(by.kind))
	}
	return nil
}
