package cdi_test

import (
	"testing"

	"github.com/flagos-ai/flagshim/fleet/fleettest"
)

// BenchmarkCLI compares `flagshim cdi generate` and `flagshim labels` with
// the default `flagshim list` on a fake machine of 8 GPUs (fake libcuda and
// NVML, nodes and /proc files under a test root): each runs the binary once
// per iteration, its default tier (presence) answering. The goal is each
// within 1.2x of list; docs/benchmarks.md has the figures.
func BenchmarkCLI(b *testing.B) {
	m := fleettest.NVIDIA(b, 8, fleettest.Options{})
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"list", []string{"list"}},
		{"cdi-generate", []string{"cdi", "generate"}},
		{"labels", []string{"labels"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if code, _, errOut := m.Run(b, nil, bc.args...); code != 0 {
					b.Fatalf("%v: exit %d: %s", bc.args, code, errOut)
				}
			}
		})
	}
}
