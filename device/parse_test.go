package device

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	r := newTestRegistry(t)
	tests := []struct {
		in   string
		want Device
	}{
		{"cuda", Device{CUDA, -1}},
		{"cuda:0", Device{CUDA, 0}},
		{"cuda:1", Device{CUDA, 1}},
		{"musa:7", Device{MUSA, 7}},
		{"flagos", Device{FlagOS, -1}},
		{"cpu", Device{CPU, -1}},
		{"cpu:0", Device{CPU, 0}},
		{"cuda:2147483647", Device{CUDA, 2147483647}},
		// Leading zeros, however many: the bound applies to the significant
		// digits (torch.device accepts "cuda:01" too).
		{"cuda:00", Device{CUDA, 0}},
		{"cuda:01", Device{CUDA, 1}},
		{"cuda:00000000001", Device{CUDA, 1}},
		{"cuda:0000000000000000000000000000000000000001", Device{CUDA, 1}},
		{"cuda:000000000000", Device{CUDA, 0}},
		{"cuda:02147483647", Device{CUDA, 2147483647}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := r.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseRejects(t *testing.T) {
	r := newTestRegistry(t)
	tests := []struct {
		in      string
		wantErr error
	}{
		{"", ErrSyntax},
		{"cuda:", ErrSyntax},
		{"cuda:-1", ErrSyntax},
		{"CUDA", ErrSyntax},
		{"cuda:1:2", ErrSyntax},
		{" cuda", ErrSyntax},
		{"cuda ", ErrSyntax},
		{"cuda:+1", ErrSyntax},
		{"cuda:0x1", ErrSyntax},
		{"cuda: 1", ErrSyntax},
		{"cuda:99999999999", ErrSyntax},
		{"cuda:2147483648", ErrSyntax},
		{"cuda:02147483648", ErrSyntax},
		{"cuda:00000000002147483648", ErrSyntax},
		{"cuda:4294967297", ErrSyntax},           // 2^32+1: wraps to 1 in a 32-bit int
		{"cuda:18446744073709551617", ErrSyntax}, // 2^64+1: wraps to 1 in a uint64
		{"cuda:0-1", ErrSyntax},
		{"cuda:00x", ErrSyntax},
		{"cuda:1 ", ErrSyntax},
		{"cuda:١", ErrSyntax}, // an Arabic-Indic digit is not a decimal digit here
		{":1", ErrSyntax},
		{"1cuda", ErrSyntax},
		{"cu-da", ErrSyntax},
		{"rocm", ErrUnknownType},
		{"rocm:0", ErrUnknownType},
		{"xpu:1", ErrUnknownType},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			_, err := r.Parse(tt.in)
			require.ErrorIs(t, err, tt.wantErr)
			msg := err.Error()
			assert.Contains(t, msg, fmt.Sprintf("%q", tt.in), "the error quotes the input")
			assert.Contains(t, msg, "cpu, cuda, flagos, musa", "the error lists the known types")
		})
	}
}

func TestStringRoundTrip(t *testing.T) {
	r := newTestRegistry(t)
	for _, d := range []Device{{CUDA, -1}, {CUDA, 0}, {MUSA, 3}, {FlagOS, maxIndex}, {CPU, 0}} {
		got, err := r.Parse(d.String())
		require.NoError(t, err)
		assert.Equal(t, d, got)
	}
	assert.Equal(t, "cuda", Device{CUDA, -1}.String())
	assert.Equal(t, "flagos:1", Device{FlagOS, 1}.String())
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"cuda", "cuda:1", "flagos:0", "", "cuda:", "cuda:-1", "CUDA", "cuda:1:2",
		" cuda", "cuda:+1", "cuda:0x1", "cuda:99999999999", "cpu:2147483647", "musa:2147483648", "a_1:3",
		"cuda:01", "cuda:00000000001", "cuda:000", "cuda:02147483648", "cuda:4294967297"} {
		f.Add(s)
	}
	r := newTestRegistry(f)
	_, err := r.Alias(CUDA, FlagOS)
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := r.Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnknownType) {
				t.Fatalf("Parse(%q): error %v wraps neither ErrSyntax nor ErrUnknownType", s, err)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("Parse(%q): error %q does not quote the input", s, err)
			}
			return
		}
		if d.Index < -1 || d.Index > maxIndex {
			t.Fatalf("Parse(%q) = %+v: index out of range", s, d)
		}
		if d.Type == CUDA {
			t.Fatalf("Parse(%q) = %+v: cuda is aliased to flagos and must not come back", s, d)
		}
		again, err := r.Parse(d.String())
		if err != nil || again != d {
			t.Fatalf("Parse(%q) = %+v, but Parse(%q) = %+v, %v", s, d, d.String(), again, err)
		}
		// One more leading zero never changes the answer.
		if d.Index >= 0 {
			typ, num, _ := strings.Cut(s, ":")
			z, err := r.Parse(typ + ":0" + num)
			if err != nil || z != d {
				t.Fatalf("Parse(%q) = %+v, but Parse(%q) = %+v, %v", s, d, typ+":0"+num, z, err)
			}
		}
	})
}

// The index is the number the digits spell, whatever the leading zeros: a
// check against strconv on every length around the bound.
func TestParseIndexMatchesStrconv(t *testing.T) {
	r := newTestRegistry(t)
	for _, num := range []string{"0", "1", "7", "10", "2147483646", "2147483647", "2147483648", "4294967295", "4294967296", "9999999999", "10000000000"} {
		want, perr := strconv.ParseUint(num, 10, 64)
		inRange := perr == nil && want <= maxIndex
		for zeros := 0; zeros <= 12; zeros++ {
			s := "cuda:" + strings.Repeat("0", zeros) + num
			d, err := r.Parse(s)
			if !inRange {
				assert.ErrorIs(t, err, ErrSyntax, s)
				continue
			}
			if assert.NoError(t, err, s) {
				assert.Equal(t, Device{CUDA, int(want)}, d, s)
				assert.Equal(t, "cuda:"+num, d.String(), "String is canonical, without zeros")
			}
		}
	}
}

func TestParseWithZerosDoesNotAllocate(t *testing.T) {
	r := newTestRegistry(t)
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = r.Parse("cuda:000000000001") }))
}
