package flagshim

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/internal/logging"
	"github.com/flagos-ai/flagshim/tier"
	"github.com/flagos-ai/flagshim/vendors"
)

// ErrBadSetting is wrapped by Init's error for every environment variable
// whose value flagshim does not accept: FLAGOS_ALIAS_CUDA, FLAGOS_BACKEND,
// FLAGOS_LOG, FLAGOS_TRACE, FLAGOS_PROBE, FLAGOS_PROBE_TIMEOUT, and a library override
// (FLAGOS_LIB*_PATH) that is not an absolute path. The message names the
// variable, its value and the accepted values. A program can tell a user's
// mistake, which it should report and stop on, from a fact of the machine
// (a driver library that is missing or failed to load), which Init reports
// too:
//
//	if _, err := flagshim.Init(ctx); errors.Is(err, flagshim.ErrBadSetting) {
//		log.Fatal(err)
//	}
var ErrBadSetting = errors.New("flagshim: invalid setting")

// Environment variables Init reads besides the vendors' (see Variables).
const (
	EnvProbe        = tier.EnvVar
	EnvProbeTimeout = "FLAGOS_PROBE_TIMEOUT"
	// EnvNVSHMEMPath is plugins/nvshmem's library override, checked with
	// the vendors' so that a bad one is refused at Init.
	EnvNVSHMEMPath = "FLAGOS_LIBNVSHMEM_PATH"
	// EnvTrace turns on the trace of every C call flagshim makes (see
	// ParseTrace): each one is logged at info level with its library,
	// function, arguments that are not pointers to data, result and
	// duration, to the logger of Init (WithLogger, else FLAGOS_LOG's) or,
	// where that one does not log info, to stderr at info level. The
	// isolated tier's children trace theirs too.
	EnvTrace = "FLAGOS_TRACE"
	// EnvTestRoot is for tests and walkthroughs only: an absolute folder
	// under which the presence tier reads /dev and /sys instead of /, so a
	// fake machine's device nodes and PCI tree can be given. Libraries are
	// searched as usual.
	EnvTestRoot = "FLAGOS_TEST_ROOT"
)

// Variable is an environment variable that changes what flagshim does.
type Variable = driver.Var

// Variables are every variable flagshim reads, in the order the CLI
// reports them: flagshim's own, every registered vendor's library
// overrides, the log level, then the visible-devices variables the vendor
// runtimes apply. docs/environment.md's table carries each one (a test
// checks).
func Variables() []Variable {
	vars := []Variable{
		{Name: alias.EnvVar, Kind: driver.VarOther, Doc: "allow (unset, 1, true, on, yes) or forbid (0, false, off, no) the cuda->flagos alias"},
		{Name: flagos.EnvVar, Kind: driver.VarOther, Doc: "auto or a vendor backend's name: where flagos routes"},
		{Name: EnvProbe, Kind: driver.VarOther, Doc: "exact, presence or isolated: how availability is probed"},
		{Name: EnvProbeTimeout, Kind: driver.VarOther, Doc: "a Go duration: the longest a driver's init may take"},
	}
	driverLibs := map[string]bool{}
	for _, v := range vendors.All() {
		driverLibs[v.Library.EnvVar] = true
	}
	var libs, other, visible []Variable
	for _, v := range vendors.Variables() {
		switch {
		case v.Kind == driver.VarVisible:
			visible = append(visible, v)
		case driverLibs[v.Name]:
			libs = append(libs, v)
		default:
			other = append(other, v)
		}
	}
	vars = append(vars, libs...)
	vars = append(vars, other...)
	vars = append(vars,
		Variable{Name: EnvNVSHMEMPath, Kind: driver.VarLibraryPath, Doc: "the absolute path of libnvshmem_host.so.3 for plugins/nvshmem"},
		Variable{Name: logging.EnvVar, Kind: driver.VarOther, Doc: "off, error, warn, info or debug: the library's log level"},
		Variable{Name: EnvTrace, Kind: driver.VarOther, Doc: "1, true, on, yes: log every C call flagshim makes (off: unset, 0, false, off, no)"},
		Variable{Name: EnvTestRoot, Kind: driver.VarOther, Doc: "tests only: an absolute folder under which /dev and /sys are read instead of /"},
	)
	return append(vars, visible...)
}

// settings are the validated environment of one Init.
type settings struct {
	aliasEnv string // FLAGOS_ALIAS_CUDA's raw value
	tier     tier.Tier
	timeout  time.Duration
	logLevel string
	trace    bool   // FLAGOS_TRACE
	root     string // FLAGOS_TEST_ROOT; "" is /
}

// ParseTrace reads FLAGOS_TRACE's value as FLAGOS_ALIAS_CUDA's is read:
// unset, empty, 0, false, off and no are off; 1, true, on and yes are on;
// case and surrounding spaces are ignored; anything else is an error that
// names the variable and the accepted values.
func ParseTrace(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "off", "no":
		return false, nil
	case "1", "true", "on", "yes":
		return true, nil
	}
	return false, fmt.Errorf("%s=%q: accepted values are 1, true, on, yes (log every C call flagshim makes) and 0, false, off, no (the default; also unset or empty)", EnvTrace, v)
}

// readSettings reads and checks every variable; the error joins one error
// per bad variable, each wrapping ErrBadSetting and naming the variable and
// what it accepts. def is the tier when FLAGOS_PROBE is unset.
func readSettings(getenv func(string) string, def tier.Tier) (settings, error) {
	var errs []error
	bad := func(err error) { errs = append(errs, fmt.Errorf("%w: %w", ErrBadSetting, err)) }
	var err error
	st := settings{aliasEnv: getenv(alias.EnvVar), logLevel: getenv(logging.EnvVar), timeout: driver.DefaultInitTimeout}
	if _, err := alias.ParseEnv(st.aliasEnv); err != nil {
		bad(err)
	}
	if _, _, err := flagos.ParseChoice(getenv(flagos.EnvVar)); err != nil {
		bad(err)
	}
	if _, _, err := logging.ParseLevel(st.logLevel); err != nil {
		bad(err)
	}
	if st.trace, err = ParseTrace(getenv(EnvTrace)); err != nil {
		bad(err)
	}
	t, err := tier.Parse(getenv(EnvProbe), def)
	if err != nil {
		bad(err)
	}
	st.tier = t
	if v := strings.TrimSpace(getenv(EnvProbeTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			bad(fmt.Errorf("%s=%q: want a Go duration such as 30s or 2m (%v)", EnvProbeTimeout, v, err))
		case d <= 0:
			bad(fmt.Errorf("%s=%q: want a duration above zero", EnvProbeTimeout, v))
		default:
			st.timeout = d
		}
	}
	if v := getenv(EnvTestRoot); v != "" {
		if !filepath.IsAbs(v) {
			bad(fmt.Errorf("%s=%q: the folder must be an absolute path (it is for tests only; unset it)", EnvTestRoot, v))
		} else {
			st.root = v
		}
	}
	for _, x := range Variables() {
		if x.Kind != driver.VarLibraryPath {
			continue
		}
		if v := getenv(x.Name); v != "" && !filepath.IsAbs(v) {
			bad(fmt.Errorf("%s=%q: the path must be absolute (relative paths and the working directory are never searched); set %s=/abs/path/to/the/library or unset it", x.Name, v, x.Name))
		}
	}
	return st, errors.Join(errs...)
}
