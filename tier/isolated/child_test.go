package isolated

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The child leaves its garbage to its exit (the collector off below
// childMemoryLimit), unless the user set GOGC or GOMEMLIMIT, which stay
// the user's.
func TestLazyCollector(t *testing.T) {
	cases := []struct {
		name      string
		env       map[string]string
		wantGC    int
		wantLimit int64
	}{
		{"unset: off below the limit", map[string]string{"GOGC": "", "GOMEMLIMIT": ""}, -1, childMemoryLimit},
		{"GOGC set: left as it is", map[string]string{"GOGC": "100", "GOMEMLIMIT": ""}, 100, math.MaxInt64},
		{"GOMEMLIMIT set: left as it is", map[string]string{"GOGC": "", "GOMEMLIMIT": "1GiB"}, 100, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			prevGC := debug.SetGCPercent(100)
			prevLimit := debug.SetMemoryLimit(math.MaxInt64)
			t.Cleanup(func() {
				debug.SetGCPercent(prevGC)
				debug.SetMemoryLimit(prevLimit)
			})
			lazyCollector()
			assert.Equal(t, tc.wantGC, debug.SetGCPercent(100), "GC percent")
			assert.Equal(t, tc.wantLimit, debug.SetMemoryLimit(math.MaxInt64), "memory limit")
		})
	}
}
