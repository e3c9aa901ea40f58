package alias

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// EnvVar turns the alias off when set to 0, false, off or no.
const EnvVar = "FLAGOS_ALIAS_CUDA"

// Writer is the name the alias redirects the live cuda probe under.
const Writer = "alias"

// ErrBadEnv is returned for a FLAGOS_ALIAS_CUDA value that is neither on nor off.
var ErrBadEnv = errors.New("alias: invalid " + EnvVar)

// Decision is the outcome of the alias rule. From and To name the alias the
// rule is about (cuda and flagos) whether or not it is active.
type Decision struct {
	Active   bool
	From, To device.Type
	Reason   string // one sentence a user can act on, at most ReasonMax bytes
	// Blocked: the alias would be active but FLAGOS_ALIAS_CUDA forbids it
	// (no usable CUDA, flagos has devices, the variable says 0/off).
	Blocked bool
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
		d.Reason = fmt.Sprintf("a CUDA runtime is present (%s), so cuda keeps meaning cuda.", devices(cuda.Devices))
		return d, nil
	}
	flagos := probes.Original(string(device.FlagOS))
	if !flagos.Available || flagos.Devices < 1 {
		d.Reason = fmt.Sprintf("no usable CUDA runtime%s and no flagos device%s, so cuda is left as it is.",
			gist(cuda), gist(flagos))
		return d, nil
	}
	if !allow {
		d.Blocked = true
		d.Reason = fmt.Sprintf("no usable CUDA runtime%s and flagos has %s, but %s=%s turns the alias off, so cuda keeps failing; unset it to let cuda mean flagos.",
			gist(cuda), devices(flagos.Devices), EnvVar, clip(strings.TrimSpace(env), gistMax))
		return d, nil
	}
	d.Active = true
	d.Reason = fmt.Sprintf("no usable CUDA runtime%s, so cuda now means flagos (%s); set %s=0 to keep cuda failing.",
		gist(cuda), devices(flagos.Devices), EnvVar)
	return d, nil
}

// ReasonMax is the longest Decision.Reason, in bytes: one sentence, whatever
// the machine. The probes' whole answers (every library tried, and why) stay
// with the probes, where a report shows them.
const ReasonMax = 300

// gistMax is the longest part of a probe's answer a reason quotes.
const gistMax = 64

// gist is " (WHY)": the first clause of a probe's reason ("cuda: libcuda
// not found" of "cuda: libcuda not found; tried ..."), cut where one error
// wraps the next (": ") to fit gistMax bytes ("flagos: no backend to route
// to: FLAGOS_BACKEND=auto" of "...: FLAGOS_BACKEND=auto: musa is not
// available (...)"); "" where nothing fits: then the probe alone says why,
// and the reason stays one sentence of at most ReasonMax bytes.
func gist(r probe.Result) string {
	s := r.Reason
	for _, sep := range []string{"; ", " (", ". ", ", so ", "\n"} {
		if i := strings.Index(s, sep); i >= 0 {
			s = s[:i]
		}
	}
	if len(s) > gistMax {
		i := strings.LastIndex(s[:gistMax], ": ")
		if i < 0 {
			return ""
		}
		s = s[:i]
	}
	s = strings.TrimRight(strings.TrimSpace(s), ".;:,")
	if s == "" || !utf8.ValidString(s) {
		return ""
	}
	return " (" + s + ")"
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func devices(n int) string {
	if n == 1 {
		return "1 device"
	}
	return fmt.Sprintf("%d devices", n)
}

// Install decides with env (FLAGOS_ALIAS_CUDA's raw value, "" when unset;
// the caller reads the variable) and, when the decision is active, aliases
// cuda to flagos in devs and redirects the live cuda probe of probes to
// flagos's answer (writer "alias"). undo removes exactly what this call
// applied.
//
// It is idempotent without global state: on registries that already carry
// the alias (the live cuda probe redirected by "alias", or cuda already
// meaning flagos, as when a concurrent Install is applying it), it applies
// nothing and returns the same decision (Decide reads original probes only,
// so it is the same whenever it runs) with an undo that does nothing.
func Install(devs *device.Registry, probes *probe.Registry, env string) (d Decision, undo func(), err error) {
	noop := func() {}
	if devs == nil || probes == nil {
		return Decision{From: device.CUDA, To: device.FlagOS}, noop, errors.New("alias: Install needs a device and a probe registry")
	}
	d, err = Decide(probes, env)
	if err != nil || !d.Active || installed(probes, d.From) {
		return d, noop, err
	}
	unalias, err := devs.Alias(d.From, d.To)
	if err != nil {
		if devs.Aliases()[d.From] == d.To {
			// A concurrent Install got there first: nothing to apply.
			return d, noop, nil
		}
		return d, noop, fmt.Errorf("alias: cannot make %s mean %s: %w", d.From, d.To, err)
	}
	unredirect, err := probes.Redirect(string(d.From), Writer, answerFor(probes, d.To))
	if err != nil {
		unalias()
		return d, noop, fmt.Errorf("alias: cannot redirect the live %s probe: %w", d.From, err)
	}
	var once sync.Once
	return d, func() { once.Do(func() { unredirect(); unalias() }) }, nil
}

// installed reports whether the live probe of from is redirected by the
// alias already.
func installed(probes *probe.Registry, from device.Type) bool {
	for _, by := range probes.RedirectedBy(string(from)) {
		if by == Writer {
			return true
		}
	}
	return false
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
