package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/tier"
)

// writeExplain prints each decision and the facts it rests on, in sentences.
// s was collected with pointer as its Refer: each backend's reason is given
// whole once, under Backends; where another answer repeats it (flagos's
// route, a probe, the alias), it points there.
func writeExplain(w io.Writer, s report.Info) error {
	var b strings.Builder
	b.WriteString("Libraries:\n")
	tried := false
	for _, be := range s.Backends {
		if len(be.Attempts) == 0 {
			continue
		}
		tried = true
		fmt.Fprintf(&b, "  For %s, flagshim tried %d place(s):\n", be.Type, report.Tried(be.Attempts))
		for _, a := range be.Attempts {
			if a.Error == "" {
				fmt.Fprintf(&b, "    - %s: opened.\n", strings.Join(a.Paths, ", "))
			} else {
				fmt.Fprintf(&b, "    - %s: %s.\n", strings.Join(a.Paths, ", "), strings.TrimSuffix(a.Error, "."))
			}
		}
	}
	if !tried {
		b.WriteString("  No driver library was tried.\n")
	}

	b.WriteString("\nBackends:\n")
	fmt.Fprintf(&b, "  The vendor backends' probes were answered by the %s tier (%s): %s.\n",
		s.Probe, tierMeaning(s.Probe), chosenBy(s))
	if s.Probe == tier.Presence {
		b.WriteString(presenceAdvice)
	}
	for _, be := range s.Backends {
		reason := be.Reason // another backend's reason is a pointer to it (report.Options.Refer)
		if be.Tier != "" && be.Tier != s.Probe {
			fmt.Fprintf(&b, "  %s was answered by the %s tier.\n", be.Type, be.Tier)
		}
		switch {
		case be.RoutesTo != "":
			fmt.Fprintf(&b, "  %s routes to %s (FLAGOS_BACKEND chooses)", be.Type, be.RoutesTo)
			if why := strings.TrimPrefix(reason, "routes to "+string(be.RoutesTo)+": "); why != pointer(be.RoutesTo) {
				fmt.Fprintf(&b, ": %s", sentence(why)) // the route's own words, not just its target's answer
			}
			b.WriteString(".\n")
		case be.Available:
			fmt.Fprintf(&b, "  %s is available with %d device(s)%s: %s.\n", be.Type, be.Devices, version(be), sentence(reason))
			whose(&b, be)
		default:
			fmt.Fprintf(&b, "  %s is not available: %s.\n", be.Type, sentence(reason))
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
	if len(s.Probes) == 0 {
		b.WriteString("  Each probe answers as the backend of its name does; none was redirected.\n")
	} else {
		b.WriteString("  The other probes answer as the backends of their names do.\n")
	}

	b.WriteString("\nAlias:\n")
	if s.Alias.Active {
		fmt.Fprintf(&b, "  %s means %s: %s\n", s.Alias.From, s.Alias.To, s.Alias.Reason)
	} else {
		fmt.Fprintf(&b, "  %s keeps its own meaning: %s\n", s.Alias.From, s.Alias.Reason)
	}
	b.WriteString("  The decision read the original cuda and flagos probes only, never a redirected one.\n")
	set := map[string]string{} // report.Info.Env lists the variables that are set
	for _, e := range s.Env {
		set[e.Name] = e.Value
	}
	if v, ok := set[alias.EnvVar]; ok {
		fmt.Fprintf(&b, "  %s is set to %q.", alias.EnvVar, v)
	} else {
		fmt.Fprintf(&b, "  %s is not set (or empty).", alias.EnvVar)
	}
	b.WriteString(" Set it to 0 to keep cuda failing where there is no CUDA; unset it to allow the alias.\n")

	b.WriteString("\nEnvironment:\n")
	for _, x := range flagshim.Variables() {
		if v, ok := set[x.Name]; ok {
			fmt.Fprintf(&b, "  %s=%q\n", x.Name, v)
		} else {
			fmt.Fprintf(&b, "  %s is not set (or empty)\n", x.Name)
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

// presenceAdvice is what the presence tier cannot contain, and the tier
// to choose then.
const presenceAdvice = "  The presence tier runs each vendor's management library in this process: one that hangs is" +
	" \"not available: timed out\" after FLAGOS_PROBE_TIMEOUT, but one that crashes or exits takes this process with it." +
	" Where a vendor's management library is known to crash, choose the isolated tier (--probe isolated," +
	" FLAGOS_PROBE=isolated): a child process answers, and a crash costs only the child.\n"

// whose says whose runtime answered an available backend and the facts
// that say so (report.Backend.Vendor, VendorFacts): what tells a
// CUDA-compatible runtime for other silicon from NVIDIA's.
func whose(b *strings.Builder, be report.Backend) {
	if be.Vendor == "" {
		return
	}
	facts := "no fact names it"
	if len(be.VendorFacts) > 0 {
		facts = strings.Join(be.VendorFacts, "; ")
	}
	switch {
	case strings.HasPrefix(be.Vendor, driver.Unknown):
		fmt.Fprintf(b, "    Whose runtime answers is %s: %s.\n", be.Vendor, facts)
	case be.Vendor == "mixed":
		fmt.Fprintf(b, "    Its devices are of more than one maker (mixed): %s.\n", facts)
	default:
		fmt.Fprintf(b, "    The runtime that answers is %s's: %s.\n", be.Vendor, facts)
	}
}

// chosenBy says who chose the tier that answered (report.Info.ProbeSource).
func chosenBy(s report.Info) string {
	switch s.ProbeSource {
	case "--probe":
		return "--probe " + string(s.Probe) + " chose it"
	case "default":
		return "it is this command's default (--probe or FLAGOS_PROBE chooses another)"
	}
	for _, e := range s.Env {
		if e.Name == s.ProbeSource && e.Set {
			return fmt.Sprintf("%s=%q chose it", e.Name, e.Value)
		}
	}
	return "--probe or FLAGOS_PROBE chooses it"
}

// pointer is what explain says in place of another backend's reason
// (report.Options.Refer): each reason is given whole once, under Backends.
func pointer(t device.Type) string { return "see " + string(t) + " under Backends" }

// attemptsPointer is what explain says in place of an attempt's error
// (report.Options.ReferAttempts): each is given whole once, under
// Libraries.
func attemptsPointer(of, from device.Type) string {
	if of == from {
		return "see Libraries"
	}
	return "as for " + string(of)
}

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
