package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier"
)

// Probe sources (Info.ProbeSource): who chose the tier that answered.
const (
	SourceFlag    = "--probe"         // the host's own choice (Options.ChosenTier)
	SourceEnv     = flagshim.EnvProbe // FLAGOS_PROBE
	SourceDefault = "default"         // the host's default (Options.DefaultTier)
)

// probeSource says who chose got, the tier that answered: the host
// (o.ChosenTier), FLAGOS_PROBE, or the host's default; "" when got is not
// the tier those would give (Init runs once per process: a program that
// called it earlier, with options of its own, chose).
func probeSource(got tier.Tier, o Options, lookupEnv func(string) (string, bool)) string {
	want, src := o.DefaultTier, SourceDefault
	if want == "" {
		want = tier.Exact // flagshim.Init's default
	}
	if o.ChosenTier != "" {
		want, src = o.ChosenTier, SourceFlag
	} else if v, _ := lookupEnv(flagshim.EnvProbe); strings.TrimSpace(v) != "" {
		t, err := tier.Parse(v, want)
		if err != nil {
			return ""
		}
		want, src = t, SourceEnv
	}
	if got != want {
		return ""
	}
	return src
}

// verdictNames is how many distinct device names a backend's part of the
// verdict quotes.
const verdictNames = 2

// Verdict is s in one line, for people: the accelerators found, what cuda
// means, and which tier answered and who chose it, so that two hosts with
// different default tiers (the CLI's isolated, the C library's presence)
// say why their answers differ:
//
//	cuda: 1 device (NVIDIA H100 80GB HBM3); cuda means cuda; isolated tier, the default of the flagshim command
//	musa: 2 devices (MTT S4000); cuda means flagos (routes to musa); isolated tier, the default of the flagshim command
//	no accelerator found; cuda means cuda; presence tier, chosen by FLAGOS_PROBE
//
// host names the program whose default tier it is ("" says "the default").
// Device names are as the drivers give them: a text output escapes them.
func Verdict(s Info, host string) string {
	var found []string
	route := device.Type("")
	for _, be := range s.Backends {
		if be.Type == device.FlagOS {
			route = be.RoutesTo
		}
		if be.Type == device.CPU || be.RoutesTo != "" || !be.Available || be.Devices < 1 {
			continue
		}
		found = append(found, fmt.Sprintf("%s: %s%s", be.Type, count(be.Devices, "device"), names(be.Properties)))
	}
	parts := []string{"no accelerator found"}
	if len(found) > 0 {
		parts = []string{strings.Join(found, ", ")}
	}
	switch {
	case s.Alias.Active && route != "":
		parts = append(parts, fmt.Sprintf("%s means %s (routes to %s)", s.Alias.From, s.Alias.To, route))
	case s.Alias.Active:
		parts = append(parts, fmt.Sprintf("%s means %s", s.Alias.From, s.Alias.To))
	case s.Alias.From != "":
		parts = append(parts, fmt.Sprintf("%s means %s", s.Alias.From, s.Alias.From))
	}
	t := fmt.Sprintf("%s tier", s.Probe)
	switch s.ProbeSource {
	case SourceFlag:
		t += ", chosen by --probe"
	case SourceEnv:
		t += ", chosen by " + SourceEnv
	case SourceDefault:
		if host == "" {
			t += ", the default"
		} else {
			t += ", the default of " + host
		}
	}
	return strings.Join(append(parts, t), "; ")
}

// names is " (NAME)" or " (NAME1, NAME2, ...)": the distinct names of the
// devices, at most verdictNames of them.
func names(ps []Device) string {
	var out []string
	more := false
	for _, p := range ps {
		n := strings.TrimSpace(p.Name)
		if n == "" || slices.Contains(out, n) {
			continue
		}
		if len(out) == verdictNames {
			more = true
			break
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return ""
	}
	if more {
		out = append(out, "…")
	}
	return " (" + strings.Join(out, ", ") + ")"
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
