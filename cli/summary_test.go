package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestSummary(t *testing.T) {
	long := "(cuda: libcuda not found; tried libcuda.so.1, libcuda.so (dl: library not found: not found in LD_LIBRARY_PATH))"
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", ""},
		{"no parentheses", "a CUDA runtime is present; cuda keeps meaning cuda.", "a CUDA runtime is present; cuda keeps meaning cuda."},
		{"short kept", "cuda now means flagos (2 devices). Set FLAGOS_ALIAS_CUDA=0 to keep cuda failing.", "cuda now means flagos (2 devices). Set FLAGOS_ALIAS_CUDA=0 to keep cuda failing."},
		{"long dropped", "no usable CUDA runtime " + long + " and no flagos device " + long + "; cuda is left as it is.", "no usable CUDA runtime and no flagos device; cuda is left as it is."},
		{"long and short", "no usable CUDA runtime " + long + "; cuda now means flagos (1 device).", "no usable CUDA runtime; cuda now means flagos (1 device)."},
		{"unbalanced kept", "broken (no end " + long[:40], "broken (no end " + long[:40]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, summary(tc.in))
		})
	}
}

// FuzzSummary: summary never grows its input, keeps every character outside
// the parentheses it drops, and leaves no balanced group longer than
// detailLen behind.
func FuzzSummary(f *testing.F) {
	for _, s := range []string{"", "a (b) c", "x ((((", "a (" + strings.Repeat("y", 60) + ") b", "))(("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := summary(s)
		assert.LessOrEqual(t, len(got), len(s))
		for i := 0; i < len(got); i++ {
			if got[i] != '(' {
				continue
			}
			if end := closing(got, i); end >= 0 && utf8.ValidString(got[i:end+1]) {
				assert.LessOrEqual(t, utf8.RuneCountInString(got[i:end+1]), detailLen, "a long group is left in %q", got)
				i = end
			}
		}
	})
}
