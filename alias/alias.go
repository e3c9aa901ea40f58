package alias

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// EnvVar turns the alias off when set to 0, false, off or no.
const EnvVar = "FLAGOS_ALIAS_CUDA"

// Writer is the name the alias redirects the live cuda probe under.
const Writer = "alias"

// ErrBadEnv is returned for a FLAGOS_ALIAS_CUDA value that is neither on nor off.
var ErrBadEnv = errors.New("alias: invalid " + EnvVar)

// Decision is the outcome of the alias rule.
type Decision struct {
	Active   bool
	From, To device.Type
	Reason   string // one sentence a user can act on
}

// ParseEnv reads a FLAGOS_ALIAS_CUDA value: unset or empty, 1, true, on and
// yes allow the alias; 0, false, off and no forbid it. Case and surrounding
// spaces are ignored; anything else is an error naming the variable and the
// accepted values.
func ParseEnv(v string) (allow bool, err error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "1", "true", "on", "yes":
		return true, nil
	case "0", "false", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("%w=%q: accepted values are 1, true, on, yes (allow the cuda->flagos alias; also unset or empty) and 0, false, off, no (keep cuda failing)", ErrBadEnv, v)
}

// Decide applies the alias rule to the original cuda and flagos probes of
// probes. env is the raw value of FLAGOS_ALIAS_CUDA, "" when unset. Live
// probes are never read.
func Decide(probes *probe.Registry, env string) (Decision, error) {
	d := Decision{From: device.CUDA, To: device.FlagOS}
	if probes == nil {
		return d, errors.New("alias: Decide needs a probe registry")
	}
	allow, err := ParseEnv(env)
	if err != nil {
		return d, err
	}
	cuda := probes.Original(string(device.CUDA))
	if cuda.Available && cuda.Devices > 0 {
		d.Reason = fmt.Sprintf("a CUDA runtime is present (%s); cuda keeps meaning cuda.", describe(cuda))
		return d, nil
	}
	flagos := probes.Original(string(device.FlagOS))
	if !flagos.Available || flagos.Devices < 1 {
		d.Reason = fmt.Sprintf("no usable CUDA runtime (%s) and no flagos device (%s); cuda is left as it is.",
			describe(cuda), describe(flagos))
		return d, nil
	}
	if !allow {
		d.Reason = fmt.Sprintf("no usable CUDA runtime (%s) and flagos has %s, but %s=%s turns the alias off; cuda keeps failing. Unset it to let cuda mean flagos.",
			describe(cuda), devices(flagos.Devices), EnvVar, strings.TrimSpace(env))
		return d, nil
	}
	d.Active = true
	d.Reason = fmt.Sprintf("no usable CUDA runtime (%s); cuda now means flagos (%s). Set %s=0 to keep cuda failing.",
		describe(cuda), devices(flagos.Devices), EnvVar)
	return d, nil
}

func describe(r probe.Result) string {
	if r.Reason != "" {
		return r.Reason
	}
	if r.Available {
		return devices(r.Devices)
	}
	return "not available"
}

func devices(n int) string {
	if n == 1 {
		return "1 device"
	}
	return fmt.Sprintf("%d devices", n)
}

// installed remembers what Install applied to a pair of registries, so that a
// second Install changes nothing and Uninstall can undo it.
type installed struct {
	decision Decision
	restores []func()
}

type pair struct {
	devs   *device.Registry
	probes *probe.Registry
}

var (
	installMu sync.Mutex
	applied   = map[pair]*installed{}
)

// Install reads FLAGOS_ALIAS_CUDA, decides, and when the decision is active
// aliases cuda to flagos in devs and redirects the live cuda probe of probes
// to flagos's answer (writer "alias"). It is idempotent: a second call on the
// same registries returns the first decision and applies nothing.
func Install(devs *device.Registry, probes *probe.Registry) (Decision, error) {
	if devs == nil || probes == nil {
		return Decision{}, errors.New("alias: Install needs a device and a probe registry")
	}
	installMu.Lock()
	defer installMu.Unlock()
	key := pair{devs, probes}
	if in, ok := applied[key]; ok {
		return in.decision, nil
	}
	d, err := Decide(probes, os.Getenv(EnvVar))
	if err != nil {
		return d, err
	}
	in := &installed{decision: d}
	if d.Active {
		unalias, err := devs.Alias(d.From, d.To)
		if err != nil {
			return d, fmt.Errorf("alias: cannot make %s mean %s: %w", d.From, d.To, err)
		}
		unredirect, err := probes.Redirect(string(d.From), Writer, answerFor(probes, d.To))
		if err != nil {
			unalias()
			return d, fmt.Errorf("alias: cannot redirect the live %s probe: %w", d.From, err)
		}
		in.restores = []func(){unredirect, unalias}
	}
	applied[key] = in
	return d, nil
}

// Uninstall undoes what Install applied to devs and probes, so a later
// Install decides afresh. It reports whether anything had been installed.
func Uninstall(devs *device.Registry, probes *probe.Registry) bool {
	installMu.Lock()
	defer installMu.Unlock()
	key := pair{devs, probes}
	in, ok := applied[key]
	if !ok {
		return false
	}
	for _, restore := range in.restores {
		restore()
	}
	delete(applied, key)
	return true
}

// answerFor is the redirected live probe: flagos's original answer, with a
// reason that says cuda is an alias. The composed reason is cached so that a
// steady answer costs no allocation.
func answerFor(probes *probe.Registry, to device.Type) probe.Func {
	type label struct{ in, out string }
	var last atomic.Pointer[label]
	prefix := fmt.Sprintf("cuda is an alias of %s (%s): ", to, EnvVar)
	return func() probe.Result {
		r := probes.Original(string(to))
		if l := last.Load(); l != nil && l.in == r.Reason {
			r.Reason = l.out
			return r
		}
		l := &label{in: r.Reason, out: prefix + r.Reason}
		last.Store(l)
		r.Reason = l.out
		return r
	}
}
