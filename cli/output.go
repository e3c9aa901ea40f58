package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/tier"

	"github.com/flagos-ai/flagshim/device"
)

var lookupEnv = os.LookupEnv

// writeJSON writes v as indented JSON (info, explain, list and resolve
// --json; docs/json.md).
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeInfo prints the short human report of `flagshim info`.
func writeInfo(w io.Writer, s report.Info) error {
	var b strings.Builder
	b.WriteString(s.Verdict)
	b.WriteString("\n\n")
	if s.Alias.Active {
		fmt.Fprintf(&b, "alias: %s means %s\n", s.Alias.From, s.Alias.To)
	} else {
		fmt.Fprintf(&b, "alias: off (%s means %s)\n", s.Alias.From, s.Alias.From)
	}
	fmt.Fprintf(&b, "  %s\n\n", summary(s.Alias.Reason))
	if !s.Alias.Active || len(s.Alias.Reason) > briefLen {
		b.WriteString("  (`flagshim explain` gives every fact behind each decision.)\n\n")
	}

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tAVAILABLE\tDEVICES\tVENDOR\tTIER\tDRIVER\tLIBRARY\tREASON")
	for _, be := range s.Backends {
		lib := orDash(be.Library)
		if be.RoutesTo != "" {
			lib = "-> " + string(be.RoutesTo)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", be.Type, yesNo(be.Available), be.Devices,
			orDash(be.Vendor), orDash(string(be.Tier)), orDash(be.DriverVersion), lib, brief(be.Reason))
	}
	tw.Flush()

	var devs []string
	for _, be := range s.Backends {
		for _, p := range be.Properties {
			line := fmt.Sprintf("  %s:%d\t%s", be.Type, p.Index, p.Name)
			if p.TotalMemory > 0 {
				line += "\t" + gib(p.TotalMemory) + " GiB"
				if p.FreeMemory > 0 {
					line += " (" + gib(p.FreeMemory) + " free)"
				}
			}
			if p.Major > 0 {
				line += fmt.Sprintf("\tcompute %d.%d", p.Major, p.Minor)
			}
			if p.MultiProcessors > 0 {
				unit := "SMs" // streaming multiprocessors
				if be.Type == device.CPU {
					unit = "cores" // MultiProcessors counts the host's logical CPUs
				}
				line += fmt.Sprintf("\t%d %s", p.MultiProcessors, unit)
			}
			if p.PCIBusID != "" {
				line += "\tpci " + p.PCIBusID
			}
			if p.UUID != "" {
				line += "\t" + p.UUID
			}
			devs = append(devs, line)
		}
	}
	if len(devs) > 0 {
		b.WriteString("\ndevices:\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, d := range devs {
			fmt.Fprintln(tw, d)
		}
		tw.Flush()
	}

	if len(s.Probes) > 0 {
		b.WriteString("\nprobes (the others answer as their backends):\n")
	}
	for _, p := range s.Probes {
		fmt.Fprintf(&b, "  %s: %s", p.Name, brief(answer(p.Live)))
		if len(p.RedirectedBy) > 0 {
			fmt.Fprintf(&b, " (redirected by %s; original: %s)", strings.Join(p.RedirectedBy, ", "), brief(answer(p.Original)))
		}
		b.WriteString("\n")
	}

	fmt.Fprintf(&b, "\nprobe tier: %s (%s)\n", s.Probe, tierMeaning(s.Probe))

	b.WriteString("\nphases:\n")
	for _, p := range s.Phases {
		step := p.Step
		if step == "" {
			step = "(no steps)"
		}
		fmt.Fprintf(&b, "  %s/%s %s", p.Name, step, time.Duration(p.DurationNS).Round(time.Microsecond))
		if p.Error != "" {
			fmt.Fprintf(&b, " FAILED: %s", p.Error)
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tierMeaning says in a few words where a tier's answers come from.
func tierMeaning(t tier.Tier) string {
	switch t {
	case tier.Exact:
		return "each driver initialized in this process"
	case tier.Presence:
		return "management libraries and device nodes; no driver initialized"
	case tier.Isolated:
		return "each driver initialized in a child process; none here"
	}
	return "unknown"
}

// gib formats a size in bytes as GiB with one decimal.
func gib(n uint64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<30)) }

// briefLen is how much of a reason the table shows; explain and --json
// show it whole.
const briefLen = 72

// detailLen is the longest parenthesis summary keeps.
const detailLen = 48

// summary is the alias's reason without its long parentheses: the probes'
// whole answers, which the table below it briefs and explain gives whole.
// "no usable CUDA runtime (cuda: libcuda not found; tried …) and no flagos
// device (…); cuda is left as it is." reads "no usable CUDA runtime and no
// flagos device; cuda is left as it is."; short ones ("(2 devices)") stay.
func summary(s string) string {
	var b strings.Builder
	for len(s) > 0 {
		open := strings.IndexByte(s, '(')
		if open < 0 {
			b.WriteString(s)
			break
		}
		end := closing(s, open)
		if end < 0 { // an unclosed '(' is text; look on after it
			b.WriteString(s[:open+1])
			s = s[open+1:]
			continue
		}
		if utf8.RuneCountInString(s[open:end+1]) > detailLen {
			b.WriteString(strings.TrimRight(s[:open], " "))
		} else {
			b.WriteString(s[:end+1])
		}
		s = s[end+1:]
	}
	return b.String()
}

// closing is the index of the ')' that closes the '(' at open, -1 if none.
func closing(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// brief cuts s to briefLen runes, marking the cut.
func brief(s string) string { return cut(s, briefLen) }

// cut cuts s to n runes, marking the cut.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func answer(r report.Result) string {
	if r.Available {
		return fmt.Sprintf("available, %d device(s)", r.Devices)
	}
	if r.Reason == "" {
		return "not available"
	}
	return "not available: " + r.Reason
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
