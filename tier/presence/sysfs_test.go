package presence

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDecimal(t *testing.T) {
	for s, want := range map[string]int{"0": 0, "12": 12, "007": 7, "2147483647": 1<<31 - 1} {
		v, ok := decimal(s)
		assert.True(t, ok, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"", "+1", "-1", " 1", "1 ", "0x1", "2147483648", "99999999999", "1a"} {
		_, ok := decimal(s)
		assert.False(t, ok, "%q", s)
	}
}

// FuzzDecimal: decimal accepts exactly the canonical non-negative int32s
// and leading zeros.
func FuzzDecimal(f *testing.F) {
	for _, s := range []string{"0", "12", "007", "", "+1", " 1", "2147483648", "99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := decimal(s)
		if !ok {
			return
		}
		if v < 0 || strings.TrimLeft(s, "0") != strings.TrimLeft(fmt.Sprint(v), "0") {
			t.Fatalf("decimal(%q) = %d", s, v)
		}
	})
}
