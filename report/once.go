package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flagos-ai/flagshim/device"
)

// Each fact once. A machine without accelerators makes every vendor say
// why it is not there: the same loader search (every folder named) for
// each library, repeated in the backend's reason, its attempts, its extra
// facts, flagos's route, the probes and the alias. Said once each, the JSON
// of such a machine is a third of what it was (18.6 KB before, on a 2-core
// machine without a GPU; TestInfoJSONSize in package cli bounds it). Nothing
// is cut: a repeated text is replaced by a pointer to the one place that
// gives it whole, or left out where the structure already says it.

// ReferOnce makes each backend's reason appear once: it is given whole by
// that backend only, and every other text that quotes it (flagos's reason,
// which carries the reason of each vendor it could not route to; the
// alias's; the probes'; the drivers' extra facts) says refer(type) in its
// place. The longest reasons are replaced first, so a reason that holds
// another is replaced whole.
//
// Collect calls it; refer nil is Pointer.
func (s *Info) ReferOnce(refer func(device.Type) string) {
	if refer == nil {
		refer = Pointer
	}
	var long []Backend
	for _, be := range s.Backends {
		if utf8.RuneCountInString(be.Reason) > ReferMin {
			long = append(long, be)
		}
	}
	if len(long) == 0 {
		return
	}
	slices.SortStableFunc(long, func(a, b Backend) int { return cmp.Compare(len(b.Reason), len(a.Reason)) })
	replacer := func(self device.Type) *strings.Replacer {
		pairs := make([]string, 0, 2*len(long))
		for _, be := range long {
			if be.Type != self {
				pairs = append(pairs, be.Reason, refer(be.Type))
			}
		}
		return strings.NewReplacer(pairs...)
	}
	all := replacer("")
	for i := range s.Backends {
		be := &s.Backends[i]
		if len(be.Extra) > 0 {
			extra := make(map[string]string, len(be.Extra))
			for k, v := range be.Extra {
				extra[k] = all.Replace(v)
			}
			be.Extra = extra
		}
		be.Reason = replacer(be.Type).Replace(be.Reason)
	}
	for i := range s.Probes {
		p := &s.Probes[i]
		p.Live.Reason = all.Replace(p.Live.Reason)
		p.Original.Reason = all.Replace(p.Original.Reason)
	}
	s.Alias.Reason = all.Replace(s.Alias.Reason)
}

// AttemptsPointer is Options.ReferAttempts's default: "see attempts" in a
// backend's own reason, "see the attempts of backend cuda" in another
// backend's attempts that failed the same way.
func AttemptsPointer(of, from device.Type) string {
	if of == from {
		return "see attempts"
	}
	return "see the attempts of backend " + string(of)
}

// ReferAttemptsOnce makes each attempt's error appear once: a backend's
// reason that quotes the error of one of its attempts (a library not found
// lists every candidate and why) says refer(t, t) in its place, and an
// attempt that failed exactly as one of an earlier backend's did (every
// library missing from the same loader search) says refer(earlier, t).
// Errors of ReferMin runes or fewer stay where they are, and so does a text
// for which refer returns "" (a text output that shows no attempts keeps
// the error in the reason).
//
// Collect calls it after ReferOnce; refer nil is AttemptsPointer.
func (s *Info) ReferAttemptsOnce(refer func(of, from device.Type) string) {
	if refer == nil {
		refer = AttemptsPointer
	}
	given := map[string]device.Type{} // an error -> the backend whose attempts give it whole
	for i := range s.Backends {
		be := &s.Backends[i]
		if len(be.Attempts) == 0 {
			continue
		}
		attempts := slices.Clone(be.Attempts) // the caller's slice is not written to
		var own []string
		for j, a := range attempts {
			if utf8.RuneCountInString(a.Error) <= ReferMin {
				continue
			}
			own = append(own, a.Error)
			if of, ok := given[a.Error]; ok && of != be.Type {
				if p := refer(of, be.Type); p != "" {
					attempts[j].Error = p
				}
			} else {
				given[a.Error] = be.Type
			}
		}
		be.Attempts = attempts
		slices.SortStableFunc(own, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		pairs := make([]string, 0, 2*len(own))
		if p := refer(be.Type, be.Type); p != "" {
			for _, e := range own {
				pairs = append(pairs, e, p)
			}
		}
		if len(pairs) > 0 {
			be.Reason = strings.NewReplacer(pairs...).Replace(be.Reason)
		}
	}
}

// groupAttempts makes one Attempt of each run of paths that failed the same
// way (or opened), in order.
func groupAttempts(in []device.Attempt) []Attempt {
	var out []Attempt
	for _, a := range in {
		if n := len(out); n > 0 && out[n-1].Error == a.Error {
			out[n-1].Paths = append(out[n-1].Paths, a.Path)
			continue
		}
		out = append(out, Attempt{Paths: []string{a.Path}, Error: a.Error})
	}
	return out
}

// ownExtra is be.Extra without what be says already: the keys that repeat
// its own fields with the same value (available, devices, reason, tier) and
// the facts longer than ReferMin runes that its reason quotes whole (the
// presence tier's reason is made of its sources' answers). A copy: the
// driver's map is not written to.
func ownExtra(be Backend) map[string]string {
	if len(be.Extra) == 0 {
		return be.Extra
	}
	same := map[string]string{
		"available": strconv.FormatBool(be.Available),
		"devices":   strconv.Itoa(be.Devices),
		"reason":    be.Reason,
		"tier":      string(be.Tier),
	}
	out := make(map[string]string, len(be.Extra))
	for k, v := range be.Extra {
		if w, ok := same[k]; ok && w == v {
			continue
		}
		if utf8.RuneCountInString(v) > ReferMin && strings.Contains(be.Reason, v) {
			continue
		}
		out[k] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// repeatsBackend reports whether probe p says nothing its backend (the
// backend of its name) does not: not redirected, and the same answer.
// Called before ReferOnce, on the answers as they are.
func (s *Info) repeatsBackend(p Probe) bool {
	if len(p.RedirectedBy) > 0 || p.Live != p.Original {
		return false
	}
	for _, be := range s.Backends {
		if string(be.Type) == p.Name {
			return p.Original == Result{Available: be.Available, Devices: be.Devices, Reason: be.Reason}
		}
	}
	return false
}
