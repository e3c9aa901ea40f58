package presence

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// devsWith makes n devices with the given UUIDs (nil: none).
func devsWith(n int, uuids []string) []Device {
	out := make([]Device, n)
	for i := range out {
		out[i] = Device{Index: i, SourceIndex: 10 + i}
		if uuids != nil {
			out[i].UUID = uuids[i]
		}
	}
	return out
}

func sources(ds []Device) []int {
	out := []int{}
	for i, d := range ds {
		if d.Index != i {
			panic(fmt.Sprintf("device %d has Index %d", i, d.Index))
		}
		out = append(out, d.SourceIndex-10)
	}
	return out
}

var nvUUIDs = []string{
	"GPU-8a1f0000-0000-0000-0000-000000000000",
	"GPU-8a2f0000-0000-0000-0000-000000000000",
	"GPU-b0000000-0000-0000-0000-000000000000",
	"GPU-c0000000-0000-0000-0000-000000000000",
}

// TestVisibleTorch: CUDA_VISIBLE_DEVICES as torch/cuda/__init__.py's
// _parse_visible_devices + _transform_uuid_to_ordinals + _device_count_nvml.
func TestVisibleTorch(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []int
	}{
		{"", []int{}},                  // set and empty: none
		{"-1", []int{}},                // negative ends the list
		{"0,1", []int{0, 1}},           //
		{"2,0", []int{2, 0}},           // order kept
		{" 1 , 3 ", []int{1, 3}},       // entries trimmed
		{"1gpu2,2ampere", []int{1, 2}}, // strtoul: leading digits
		{"+1", []int{1}},               // a sign is read
		{"-0,1", []int{0, 1}},          // int("-0") is 0
		{"03", []int{3}},               // leading zeros
		{"007", []int{}},               // 7: past the 4 devices
		{"0,x,1", []int{0}},            // first invalid ends the list
		{"0,,1", []int{0}},             // an empty entry is invalid
		{"0,1,0", []int{}},             // a repeat empties the list
		{"0,9,0", []int{}},             // ... even past an out-of-range one (torch checks repeats first)
		{"0,-1,0", []int{0}},           // ... but not past the end of the list
		{"1,9,2", []int{1}},            // an ordinal past the last device ends the list
		{"1,99999999999999999999999,2", []int{1}},
		{"99999999999999999998,99999999999999999999", []int{}}, // out of range, distinct (not a repeat)
		{"GPU-8a1f", []int{0}},                                 // a unique UUID prefix
		{"GPU-8a", []int{}},                                    // ambiguous: ends the list
		{"GPU-c,GPU-b", []int{3, 2}},                           //
		{"GPU-c,1", []int{3}},                                  // a non-UUID entry ends a UUID list
		{"GPU-c, GPU-b", []int{3}},                             // UUID entries are not trimmed
		{"GPU-c,GPU-x,GPU-b", []int{3}},                        // unmatched ends it
		{"GPU-c,GPU-c", []int{}},                               // a repeated entry empties it
		{"GPU-c0,GPU-c", []int{}},                              // two entries on one device empty it
		{"1,GPU-c", []int{1}},                                  // ordinals list: a UUID is invalid
	} {
		t.Run(fmt.Sprintf("%q", c.value), func(t *testing.T) {
			got, err := Visible(devsWith(4, nvUUIDs), c.value, true)
			require.NoError(t, err)
			assert.Equal(t, c.want, sources(got))
		})
	}
}

func TestVisibleTorchUnsetAndUndecidable(t *testing.T) {
	got, err := Visible(devsWith(3, nil), "ignored", false)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, sources(got), "unset: every device")

	_, err = Visible(devsWith(2, nvUUIDs[:2]), "MIG-5a7c,MIG-1111", true)
	assert.ErrorIs(t, err, ErrUndecidable, "MIG instances are not NVML devices")

	_, err = Visible(devsWith(2, nil), "GPU-8a1f", true)
	assert.ErrorIs(t, err, ErrUndecidable, "UUIDs where the devices carry none")

	got, err = Visible(devsWith(2, nil), "1", true)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, sources(got), "ordinals need no UUID")
}

func TestVisibleMTMLUUIDs(t *testing.T) {
	mt := []string{"5f3a0000-aaaa-bbbb-cccc-dddddddddddd", "6e4b0000-aaaa-bbbb-cccc-dddddddddddd"}
	got, err := Visible(devsWith(2, mt), "GPU-6e4b", true)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, sources(got), `"GPU-" is dropped to match a UUID written without it`)
}

// The RvdFilter examples of ROCR-Runtime's amd_filter_device.h, on its four
// devices.
var rocrUUIDs = []string{"GPU-BABABABABABABABA", "GPU-ABBAABBAABBAABBA", "GPU-BABAABBAABBABABA", "GPU-ABBABABABABAABBA"}

func TestVisibleROCR(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []int
	}{
		{"", []int{}},       // A1
		{"-1", []int{}},     // A2
		{"GPU-XX", []int{}}, // A3
		{"3,GPU-BABABABABABABABA,4", []int{3, 0}},   // B
		{"1,GPU-ABBAABBAABBAABBA,GPU-XX", []int{1}}, // C: the UUID repeats device 1
		{"3,GPU-BABAABBA,GPU-XX", []int{3, 2}},      // D
		{"gpu-abbab", []int{3}},                     // upper-cased
		{" 2 ,1", []int{2, 1}},                      // trimmed
		{"0x1,010", []int{1}},                       // base 0: 010 is 8, out of range
		{"01,2", []int{1, 2}},                       // octal 1
		{"1,", []int{1}},                            // getline drops a final empty entry
		{"1,,2", []int{1}},                          // an empty entry ends the list
		{"1,1", []int{1}},                           // a repeat ends the list
		{"1a", []int{}},                             // not a whole number
		{"GPU-B", []int{}},                          // under 5 characters
		{"GPU-BABA", []int{}},                       // ambiguous
		{"0,1,2,3,0", []int{0, 1, 2, 3}},            // only <count> entries are read
		{"4294967297", []int{1}},                    // truncated to 32 bits, as ROCR stores it
		{"-99999999999999999999", []int{0}},         // LONG_MIN truncates to 0
	} {
		t.Run(fmt.Sprintf("%q", c.value), func(t *testing.T) {
			sel, err := selectVisible(rocr, c.value, pool{n: 4, uuids: rocrUUIDs})
			require.NoError(t, err)
			assert.Equal(t, c.want, sel)
		})
	}
	_, err := selectVisible(rocr, "GPU-BABA", pool{n: 4})
	assert.ErrorIs(t, err, ErrUndecidable)
}

func TestVisibleCLR(t *testing.T) {
	uuids := []string{"GPU-aaaa000000000001", "GPU-bbbb000000000002", "", "GPU-aaaa000000000004"}
	for _, c := range []struct {
		value string
		want  []int
	}{
		{"0,2", []int{0, 2}},
		{"2,0,2,1", []int{2, 0, 1}},      // a repeat is skipped
		{"0,01", []int{0}},               // not canonical: ends the list
		{"0,+1", []int{0}},               //
		{"0, 1", []int{0}},               //
		{"1,", []int{1}},                 // a final comma is ignored
		{",1", []int{}},                  // a first empty entry ends it
		{"0,4", []int{0}},                // out of range
		{"GPU-bbbb", []int{1}},           // contained in a UUID
		{"GPU-aaaa", []int{0}},           // the first that contains it
		{"0000000000004,GPU-b", []int{}}, // not "GPU-": read as a number (and too large)
		{"GPU-cccc,0", []int{}},          // unmatched
	} {
		t.Run(fmt.Sprintf("%q", c.value), func(t *testing.T) {
			sel, err := selectVisible(clr, c.value, pool{n: 4, uuids: uuids})
			require.NoError(t, err)
			assert.Equal(t, c.want, sel)
		})
	}
}

// TestVisibleROCRCLR: the exported dialects are the parser on the devices'
// UUIDs, with the selected devices renumbered.
func TestVisibleROCRCLR(t *testing.T) {
	devs := devsWith(4, rocrUUIDs)
	got, err := VisibleROCR(devs, "3,GPU-BABAABBA,GPU-XX")
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, sources(got))

	got, err = VisibleROCR(devs, "")
	require.NoError(t, err)
	assert.Equal(t, []int{}, sources(got), "set and empty: none")

	_, err = VisibleROCR(devsWith(2, nil), "GPU-ABBA")
	assert.ErrorIs(t, err, ErrUndecidable, "UUIDs where the devices carry none")

	got, err = VisibleCLR(devs, "2,0,2,1")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0, 1}, sources(got))

	got, err = VisibleCLR(devs, "GPU-ABBAB")
	require.NoError(t, err)
	assert.Equal(t, []int{3}, sources(got))

	_, err = VisibleCLR(devsWith(2, nil), "GPU-ABBA")
	assert.ErrorIs(t, err, ErrUndecidable)

	// The pieces compose: ROCR's list is what CLR indexes.
	rocrDevs, err := VisibleROCR(devs, "3,1,2")
	require.NoError(t, err)
	got, err = VisibleCLR(rocrDevs, "2,0")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, sources(got))

	shuffled := []Device{devs[2], devs[0]}
	got = Renumber(shuffled)
	assert.Equal(t, []int{2, 0}, sources(got))
	assert.Equal(t, 2, shuffled[0].Index, "Renumber copies: its argument keeps its ordinals")
}

func TestStrtolBase0(t *testing.T) {
	for _, c := range []struct {
		s  string
		v  int64
		ok bool
	}{
		{"0", 0, true}, {"12", 12, true}, {"-3", -3, true}, {"+3", 3, true},
		{"0x1f", 31, true}, {"0X1F", 31, true}, {"017", 15, true}, {"08", 0, false},
		{"0x", 0, false}, {"0xg", 0, false}, {"+", 0, false}, {"-", 0, false}, {"1 ", 0, false},
		{"9223372036854775807", 1<<63 - 1, true}, {"9223372036854775808", 1<<63 - 1, true},
		{"-9223372036854775808", -1 << 63, true}, {"-9223372036854775809", -1 << 63, true},
		{"0xffffffffffffffffff", 1<<63 - 1, true},
	} {
		v, ok := strtolBase0(c.s)
		assert.Equal(t, c.ok, ok, c.s)
		if c.ok {
			assert.Equal(t, c.v, v, c.s)
		}
	}
}

// FuzzVisible: no input makes the parser panic or select an impossible set.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "0", "-1", "1,0", "GPU-8a", "MIG-1", "0x1,010", "GPU-BABA,3", "1gpu2,2", ",", "9999999999999999999999"} {
		f.Add(s, uint8(4), uint8(0), true)
		f.Add(s, uint8(2), uint8(1), false)
		f.Add(s, uint8(0), uint8(2), true)
	}
	f.Fuzz(func(t *testing.T, value string, n uint8, d uint8, withUUIDs bool) {
		count := int(n % 9)
		var uuids []string
		if withUUIDs {
			uuids = make([]string, count)
			for i := range uuids {
				uuids[i] = fmt.Sprintf("GPU-%016x", uint64(i)*0x1111111111111111)
			}
		}
		dl := dialect(d % 3)
		sel, err := selectVisible(dl, value, pool{n: count, uuids: uuids})
		if err != nil {
			if !errors.Is(err, ErrUndecidable) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(sel) > count {
			t.Fatalf("%d selected of %d", len(sel), count)
		}
		seen := map[int]bool{}
		for _, i := range sel {
			if i < 0 || i >= count || seen[i] {
				t.Fatalf("dialect %d %q: bad selection %v of %d", dl, value, sel, count)
			}
			seen[i] = true
		}
		devs, err := Visible(devsWith(count, uuids), value, true)
		if err == nil {
			for i, dv := range devs {
				if dv.Index != i {
					t.Fatalf("Index %d at %d", dv.Index, i)
				}
			}
		}
	})
}
