package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flagos-ai/flagshim/alias"
)

// writeExplain prints each decision and the facts it rests on, in sentences.
func writeExplain(w io.Writer, s snapshot) error {
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
		switch {
		case be.RoutesTo != "":
			fmt.Fprintf(&b, "  %s routes to %s (FLAGOS_BACKEND chooses): %s.\n", be.Type, be.RoutesTo,
				sentence(strings.TrimPrefix(be.Reason, "routes to "+string(be.RoutesTo)+": ")))
		case be.Available:
			fmt.Fprintf(&b, "  %s is available with %d device(s)%s: %s.\n", be.Type, be.Devices, version(be), sentence(be.Reason))
		default:
			fmt.Fprintf(&b, "  %s is not available: %s.\n", be.Type, sentence(be.Reason))
		}
	}

	b.WriteString("\nProbes:\n")
	for _, p := range s.Probes {
		fmt.Fprintf(&b, "  Asked \"is %s available?\", the true runtime answers %s.\n", p.Name, answer(p.Original))
		if len(p.RedirectedBy) > 0 {
			fmt.Fprintf(&b, "    The live answer was redirected by %s and now says %s.\n",
				strings.Join(p.RedirectedBy, ", then "), answer(p.Live))
		}
	}

	b.WriteString("\nAlias:\n")
	if s.Alias.Active {
		fmt.Fprintf(&b, "  %s means %s: %s\n", s.Alias.From, s.Alias.To, s.Alias.Reason)
	} else {
		fmt.Fprintf(&b, "  %s keeps its own meaning: %s\n", s.Alias.From, s.Alias.Reason)
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

func sentence(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if s == "" {
		return "no reason given"
	}
	return s
}

func version(be backendJSON) string {
	if be.DriverVersion == "" {
		return ""
	}
	return ", driver " + be.DriverVersion
}
