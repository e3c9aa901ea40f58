package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
)

// ReferOnce: each long reason whole in its backend only, "see backend X"
// everywhere else; short reasons stay where they are.
func TestReferOnce(t *testing.T) {
	cuda := "cuda: libcuda not found; tried libcuda.so.1, libcuda.so (dl: library not found: not found in LD_LIBRARY_PATH (unset))"
	musa := "musa: libmusa not found; tried libmusa.so.1, libmusa.so (dl: library not found: not found in LD_LIBRARY_PATH (unset))"
	flagos := "flagos: no backend to route to: FLAGOS_BACKEND=auto: musa is not available (" + musa + "); cuda is not available (" + cuda + ")"
	short := "acme: no device"
	s := Info{
		Alias: Alias{Reason: "no usable CUDA runtime (" + cuda + ") and no flagos device (" + flagos + "); cuda is left as it is."},
		Backends: []Backend{
			{Type: "acme", Reason: short},
			{Type: device.CUDA, Reason: cuda, Extra: map[string]string{"reason": cuda, "tier": "isolated"}},
			{Type: device.FlagOS, Reason: flagos, Extra: map[string]string{"route_error": flagos}},
			{Type: device.MUSA, Reason: musa},
		},
		Probes: []Probe{
			{Name: "acme", Live: Result{Reason: short}, Original: Result{Reason: short}},
			{Name: "cuda", Live: Result{Reason: cuda}, Original: Result{Reason: cuda}},
		},
	}
	extra := s.Backends[1].Extra
	s.ReferOnce(nil)
	assert.Equal(t, "no usable CUDA runtime (see backend cuda) and no flagos device (see backend flagos); cuda is left as it is.", s.Alias.Reason)
	assert.Equal(t, short, s.Backends[0].Reason, "a short reason stays")
	assert.Equal(t, cuda, s.Backends[1].Reason, "a backend gives its own reason whole")
	assert.Equal(t, map[string]string{"reason": "see backend cuda", "tier": "isolated"}, s.Backends[1].Extra)
	assert.Equal(t, cuda, extra["reason"], "the caller's map is not written to")
	assert.Equal(t, "flagos: no backend to route to: FLAGOS_BACKEND=auto: musa is not available (see backend musa); cuda is not available (see backend cuda)", s.Backends[2].Reason)
	assert.Equal(t, "see backend flagos", s.Backends[2].Extra["route_error"])
	assert.Equal(t, musa, s.Backends[3].Reason)
	assert.Equal(t, short, s.Probes[0].Original.Reason)
	assert.Equal(t, "see backend cuda", s.Probes[1].Original.Reason)
	assert.Equal(t, "see backend cuda", s.Probes[1].Live.Reason)

	s = Info{Alias: Alias{Reason: "x (" + cuda + ")"}, Backends: []Backend{{Type: device.CUDA, Reason: cuda}}}
	s.ReferOnce(func(t device.Type) string { return "see " + strings.ToUpper(string(t)) })
	assert.Equal(t, "x (see CUDA)", s.Alias.Reason, "the pointer is the caller's")
}
