package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// writeExplain prints each decision and the facts it rests on, in sentences.
// Each backend's reason is given whole once, under Backends; where another
// answer repeats it (flagos's route, a probe, the alias), it points there.
func writeExplain(w io.Writer, s report.Info) error {
	var b strings.Builder
	b.WriteString("Libraries:\n")
	tried := false
	for _, be := range s.Backends {
		if len(be.Attempts) == 0 {
			continue
		}
		tried = true
		fmt.Fprintf(&b, "  For %s, flagshim tried %d place(s):\n", be.Type, len(be.Attempts))
		for _, a := range be.Attempts {
			if a.Error == "" {
				fmt.Fprintf(&b, "    - %s: opened.\n", a.Path)
			} else {
				fmt.Fprintf(&b, "    - %s: %s.\n", a.Path, strings.TrimSuffix(a.Error, "."))
			}
		}
	}
	if !tried {
		b.WriteString("  No driver library was tried.\n")
	}

	b.WriteString("\nBackends:\n")
	fmt.Fprintf(&b, "  The vendor backends were probed in the %s tier: %s (--probe or FLAGOS_PROBE chooses; the CLI's default is isolated).\n",
		s.Probe, tierMeaning(s.Probe))
	for _, be := range s.Backends {
		reason := referTo(s.Backends, be.Type).Replace(be.Reason)
		switch {
		case be.RoutesTo != "":
			fmt.Fprintf(&b, "  %s routes to %s (FLAGOS_BACKEND chooses)", be.Type, be.RoutesTo)
			if why := strings.TrimPrefix(reason, "routes to "+string(be.RoutesTo)+": "); why != pointer(be.RoutesTo) {
				fmt.Fprintf(&b, ": %s", sentence(why)) // the route's own words, not just its target's answer
			}
			b.WriteString(".\n")
		case be.Available:
			fmt.Fprintf(&b, "  %s is available with %d device(s)%s: %s.\n", be.Type, be.Devices, version(be), sentence(reason))
		default:
			fmt.Fprintf(&b, "  %s is not available: %s.\n", be.Type, sentence(reason))
		}
	}
	refer := referTo(s.Backends, "")

	b.WriteString("\nProbes:\n")
	for _, p := range s.Probes {
		fmt.Fprintf(&b, "  Asked \"is %s available?\", the true runtime answers %s.\n", p.Name, refer.Replace(answer(p.Original)))
		if len(p.RedirectedBy) > 0 {
			fmt.Fprintf(&b, "    The live answer was redirected by %s and now says %s.\n",
				strings.Join(p.RedirectedBy, ", then "), refer.Replace(answer(p.Live)))
		}
	}

	b.WriteString("\nAlias:\n")
	if s.Alias.Active {
		fmt.Fprintf(&b, "  %s means %s: %s\n", s.Alias.From, s.Alias.To, refer.Replace(s.Alias.Reason))
	} else {
		fmt.Fprintf(&b, "  %s keeps its own meaning: %s\n", s.Alias.From, refer.Replace(s.Alias.Reason))
	}
	b.WriteString("  The decision read the original cuda and flagos probes only, never a redirected one.\n")
	for _, e := range s.Env {
		if e.Name == alias.EnvVar {
			if e.Set {
				fmt.Fprintf(&b, "  %s is set to %q.", e.Name, e.Value)
			} else {
				fmt.Fprintf(&b, "  %s is not set (or empty).", e.Name)
			}
			b.WriteString(" Set it to 0 to keep cuda failing where there is no CUDA; unset it to allow the alias.\n")
		}
	}

	b.WriteString("\nEnvironment:\n")
	for _, e := range s.Env {
		if e.Set {
			fmt.Fprintf(&b, "  %s=%q\n", e.Name, e.Value)
		} else {
			fmt.Fprintf(&b, "  %s is not set (or empty)\n", e.Name)
		}
	}

	b.WriteString("\nPhases (in the order they ran):\n")
	for _, p := range s.Phases {
		step := p.Step
		if step == "" {
			step = "(no steps)"
		}
		d := time.Duration(p.DurationNS).Round(time.Microsecond)
		if p.Error != "" {
			fmt.Fprintf(&b, "  %s/%s failed after %s: %s\n", p.Name, step, d, p.Error)
		} else {
			fmt.Fprintf(&b, "  %s/%s took %s.\n", p.Name, step, d)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// referTo replaces each backend's whole reason, but self's, with a pointer
// to where explain gives it ("see musa under Backends"): flagos's reason
// carries the reason of every vendor it could not route to, and the alias's
// the cuda and flagos probes', so without it one missing library's search
// was printed up to six times. Reasons of detailLen runes or fewer stay where
// they are (short ones read better inline and could match by chance); the
// longest are matched first, so a reason that holds another is replaced
// whole.
func referTo(backends []report.Backend, self device.Type) *strings.Replacer {
	long := slices.DeleteFunc(slices.Clone(backends), func(be report.Backend) bool {
		return be.Type == self || utf8.RuneCountInString(be.Reason) <= detailLen
	})
	slices.SortStableFunc(long, func(a, b report.Backend) int { return cmp.Compare(len(b.Reason), len(a.Reason)) })
	pairs := make([]string, 0, 2*len(long))
	for _, be := range long {
		pairs = append(pairs, be.Reason, pointer(be.Type))
	}
	return strings.NewReplacer(pairs...)
}

// pointer is what referTo puts in place of t's reason.
func pointer(t device.Type) string { return "see " + string(t) + " under Backends" }

func sentence(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" {
		return "no reason given"
	}
	return s
}

func version(be report.Backend) string {
	if be.DriverVersion == "" {
		return ""
	}
	return ", driver " + be.DriverVersion
}
