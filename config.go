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
)

// Environment variables Init reads (see also alias.EnvVar, flagos.EnvVar,
// the drivers' override variables and logging's FLAGOS_LOG).
const (
	EnvProbe        = "FLAGOS_PROBE"
	EnvProbeTimeout = "FLAGOS_PROBE_TIMEOUT"
)

// LibraryPathVars are the override variables of every library flagshim may
// open: each holds an absolute path or is unset.
var LibraryPathVars = []string{
	"FLAGOS_LIBCUDA_PATH", "FLAGOS_LIBMUSA_PATH", "FLAGOS_LIBHIP_PATH",
	"FLAGOS_LIBNVML_PATH", "FLAGOS_LIBMTML_PATH", "FLAGOS_LIBNVSHMEM_PATH",
}

// settings are the validated environment of one Init.
type settings struct {
	aliasEnv string // FLAGOS_ALIAS_CUDA's raw value
	tier     driver.Tier
	timeout  time.Duration
	logLevel string
}

// readSettings reads and checks every variable; the error joins one error
// per bad variable, each wrapping ErrBadSetting and naming the variable and
// what it accepts. def is the tier when FLAGOS_PROBE is unset.
func readSettings(getenv func(string) string, def driver.Tier) (settings, error) {
	var errs []error
	bad := func(err error) { errs = append(errs, fmt.Errorf("%w: %w", ErrBadSetting, err)) }
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
	tier, err := driver.ParseTier(strings.TrimSpace(getenv(EnvProbe)), def)
	if err != nil {
		bad(err)
	}
	st.tier = tier
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
	for _, k := range LibraryPathVars {
		if v := getenv(k); v != "" && !filepath.IsAbs(v) {
			bad(fmt.Errorf("%s=%q: the path must be absolute (relative paths and the working directory are never searched); set %s=/abs/path/to/the/library or unset it", k, v, k))
		}
	}
	return st, errors.Join(errs...)
}
