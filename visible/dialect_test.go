package visible

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// poolOf is a pool of whole devices with the given UUIDs (nil: none).
func poolOf(n int, uuids []string) Pool {
	p := Pool{}
	for i := 0; i < n; i++ {
		d := Device{}
		if uuids != nil {
			d.UUID = uuids[i]
		}
		p.Devices = append(p.Devices, d)
		p.at = append(p.at, i)
	}
	return p
}

var nvUUIDs = []string{
	"GPU-8a1f0000-0000-0000-0000-000000000000",
	"GPU-8a2f0000-0000-0000-0000-000000000000",
	"GPU-b0000000-0000-0000-0000-000000000000",
	"GPU-c0000000-0000-0000-0000-000000000000",
}

var cudaDialect = CUDA{UUIDPrefix: "GPU-", MIG: true}

// TestCUDA: CUDA_VISIBLE_DEVICES as the CUDA guide documents it and as
// torch/cuda/__init__.py's _parse_visible_devices +
// _transform_uuid_to_ordinals + _device_count_nvml read it.
func TestCUDA(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []int
	}{
		{"", []int{}},                  // set and empty: none (guide)
		{"-1", []int{}},                // a negative index ends the list
		{"0,1", []int{0, 1}},           //
		{"2,0", []int{2, 0}},           // order kept (guide: "2,1" enumerates 2 first)
		{"0,2,-1,1", []int{0, 2}},      // the guide's example
		{" 1 , 3 ", []int{1, 3}},       // entries trimmed
		{"1gpu2,2ampere", []int{1, 2}}, // strtoul: leading digits
		{"+1", []int{1}},               // a sign is read
		{"-0,1", []int{0, 1}},          // int("-0") is 0
		{"03", []int{3}},               // leading zeros
		{"007", []int{}},               // 7: past the 4 devices
		{"0,x,1", []int{0}},            // the first invalid entry ends the list
		{"0,,1", []int{0}},             // an empty entry is invalid
		{"0,1,0", []int{}},             // a repeat empties the list
		{"0,0", []int{}},               //
		{"0,9,0", []int{}},             // ... even past an out-of-range one (torch checks repeats first)
		{"0,-1,0", []int{0}},           // ... but not past the end of the list
		{"1,9,2", []int{1}},            // an index past the last device ends the list
		{"1,99999999999999999999999,2", []int{1}},
		{"99999999999999999998,99999999999999999999", []int{}}, // out of range, distinct (not a repeat)
		{"GPU-8a1f", []int{0}},                                 // a unique UUID prefix
		{"GPU-8a1f0000-0000-0000-0000-000000000000", []int{0}}, // a whole UUID
		{"GPU-8a", []int{}},                                    // ambiguous: ends the list
		{"GPU-c,GPU-8a,GPU-b", []int{3}},                       // ... wherever it is
		{"GPU-c,GPU-b", []int{3, 2}},                           //
		{"GPU-c,1", []int{3}},                                  // a non-UUID entry ends a UUID list
		{"GPU-c, GPU-b", []int{3}},                             // UUID entries are not trimmed
		{"GPU-c,GPU-x,GPU-b", []int{3}},                        // unmatched ends it
		{"GPU-c,GPU-c", []int{}},                               // a repeated entry empties it
		{"GPU-c0,GPU-c", []int{}},                              // two entries on one device empty it
		{"1,GPU-c", []int{1}},                                  // an index list: a UUID is invalid
		{"GPU-", []int{}},                                      // "GPU-" alone matches every device: ambiguous
	} {
		t.Run(fmt.Sprintf("%q", c.value), func(t *testing.T) {
			sel, err := cudaDialect.Select(c.value, poolOf(4, nvUUIDs))
			require.NoError(t, err)
			assert.Equal(t, c.want, sel.Positions)
			assert.Equal(t, !strings.HasPrefix(c.value, "GPU-"), sel.ByIndex, "indexes depend on the order; UUIDs do not")
		})
	}
}

func TestCUDAUndecidable(t *testing.T) {
	_, err := cudaDialect.Select("GPU-8a1f", poolOf(2, nil))
	assert.ErrorIs(t, err, ErrUndecidable, "UUIDs where the devices carry none")
	_, err = cudaDialect.Select("MIG-5a7c", poolOf(2, nvUUIDs[:2]))
	assert.ErrorIs(t, err, ErrUndecidable, "MIG instances where the source lists no partition")
	sel, err := cudaDialect.Select("1", poolOf(2, nil))
	require.NoError(t, err)
	assert.Equal(t, []int{1}, sel.Positions, "indexes need no UUID")

	gcu := CUDA{UUIDPrefix: "GCU-", Undecidable: []string{"DRS-"}}
	_, err = gcu.Select("DRS-0000", poolOf(2, nil))
	assert.ErrorIs(t, err, ErrUndecidable, "a DRS partition")
	_, err = gcu.Select("MIG-0000", poolOf(2, nil))
	assert.ErrorIs(t, err, ErrUndecidable, "torch_gcu skips MIG values too")
	_, err = gcu.Select("GCU-00", poolOf(2, []string{"00000000-1e36", "00000001-1e36"}))
	assert.ErrorIs(t, err, ErrUndecidable, "EFML's UUIDs are not in GCU- form: torch_gcu's match cannot be reproduced")
	sel, err = gcu.Select("GCU-1", poolOf(2, []string{"GCU-0a", "GCU-1b"}))
	require.NoError(t, err)
	assert.Equal(t, []int{1}, sel.Positions)
}

// migPool: GPU 0 in MIG mode with instances 2 and 3, GPU 1 whole, GPU 4
// in MIG mode without instance.
func migPool() Pool {
	p := Pool{Partitions: true, Devices: []Device{
		{UUID: "GPU-aaaa", Partitioned: true},
		{UUID: "GPU-bbbb"},
		{UUID: "MIG-1111", Partition: true, Parent: 0},
		{UUID: "MIG-2222", Partition: true, Parent: 0},
		{UUID: "GPU-cccc", Partitioned: true},
	}}
	for i := range p.Devices {
		p.at = append(p.at, i)
	}
	return p
}

// TestCUDAMIG: NVIDIA's MIG user guide, "CUDA Device Enumeration": one MIG
// instance per process, the first available; no GPU outside MIG mode
// beside it; "MIG-<UUID>" names an instance.
func TestCUDAMIG(t *testing.T) {
	for _, c := range []struct {
		value string
		want  []int
		err   bool
	}{
		{"MIG-2222", []int{3}, false},
		{"MIG-2222,MIG-1111", []int{3}, false}, // one instance only
		{"MIG-9999,MIG-1111", []int{}, false},  // the first entry names nothing: the list ends
		{"MIG-1111,MIG-1111", []int{}, false},  // a repeat empties the list
		{"MIG-11", nil, true},                  // a prefix: not documented
		{"MIG-GPU-aaaa/1/0", nil, true},        // the pre-R470 form
		{"0", []int{2}, false},                 // GPU 0 is in MIG mode: its first instance
		{"1,0", []int{2}, false},               // ... and no whole GPU beside it
		{"1", []int{1}, false},                 // no GPU in MIG mode: as usual
		{"GPU-aaaa", []int{2}, false},          //
		{"2", nil, true},                       // GPU 2 (cccc) is in MIG mode without instance
	} {
		t.Run(c.value, func(t *testing.T) {
			sel, err := cudaDialect.Select(c.value, migPool())
			if c.err {
				assert.ErrorIs(t, err, ErrUndecidable)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, sel.Positions)
		})
	}
}

// The RvdFilter examples of ROCR-Runtime's amd_filter_device.h, on its four
// devices.
var rocrUUIDs = []string{"GPU-BABABABABABABABA", "GPU-ABBAABBAABBAABBA", "GPU-BABAABBAABBABABA", "GPU-ABBABABABABAABBA"}

func TestROCR(t *testing.T) {
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
			sel, err := ROCR{}.Select(c.value, poolOf(4, rocrUUIDs))
			require.NoError(t, err)
			assert.Equal(t, c.want, sel.Positions)
		})
	}
	_, err := ROCR{}.Select("GPU-BABA", poolOf(4, nil))
	assert.ErrorIs(t, err, ErrUndecidable)
}

func TestCLR(t *testing.T) {
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
			sel, err := CLR{}.Select(c.value, poolOf(4, uuids))
			require.NoError(t, err)
			assert.Equal(t, c.want, sel.Positions)
		})
	}
	_, err := CLR{}.Select("GPU-ABBA", poolOf(2, nil))
	assert.ErrorIs(t, err, ErrUndecidable)
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

// The cases follow Runtime::GetVisibleDevices and SplitString
// (hicann/runtime src/runtime/core/src/runtime.cc) step by step.
func TestAscendRT(t *testing.T) {
	for _, c := range []struct {
		value string
		n     int
		want  []int
		note  string // a part of the note; "" for none
	}{
		{"0", 4, []int{0}, ""},
		{"1,3", 4, []int{1, 3}, ""},
		{"0,1,2,3", 4, []int{0, 1, 2, 3}, ""},
		{"007,8", 9, []int{7, 8}, ""},                       // std::stoi
		{"1,2x", 4, []int{1, 2}, ""},                        // the run before the stop counts
		{"1,2,", 4, []int{1, 2}, ""},                        // a final comma
		{"1, 2", 4, []int{1}, ""},                           // a space ends the list
		{"1,,2", 4, []int{1}, ""},                           // two commas in a row end it
		{"1,5,2", 4, []int{1}, ""},                          // past the last device ends it before the order check
		{"0,1,2,3,4", 2, []int{0, 1}, ""},                   // as many as there are devices
		{"1,99999999999,2", 4, []int{1}, ""},                // past 2^31-1
		{"2147483647", 4, []int{}, "selects no device"},     // int's largest is past the devices
		{"", 4, []int{}, "selects no device"},               // set and empty
		{" 1", 4, []int{}, "selects no device"},             // must start with a digit
		{"-1", 4, []int{}, "selects no device"},             // no sign
		{"+1", 4, []int{}, "selects no device"},             //
		{"GPU-1234", 4, []int{}, "selects no device"},       // no UUIDs
		{"npu-0", 4, []int{}, "selects no device"},          // no names (those are the container runtime's)
		{"4", 4, []int{}, "selects no device"},              // past the last
		{"2,1", 4, []int{}, "not in ascending order"},       // the whole list is refused
		{"0,2,1", 4, []int{}, "not in ascending order"},     //
		{"1,1", 4, []int{}, "repeats device 1"},             //
		{"0,1,1,2", 4, []int{}, "repeats device 1"},         //
		{"0,01", 4, []int{0, 1}, ""},                        // "01" is 1
		{"3,2", 2, []int{}, "selects no device"},            // 3 ends the list before 2 is read
		{"1", 0, []int{}, ""},                               // no device to select: no note
		{strings.Repeat("0", 127) + "1,2", 4, []int{1}, ""}, // only 128 bytes are read: ",2" is cut
	} {
		got, note := SelectAscendRT(c.value, c.n)
		assert.Equal(t, c.want, got, "%q over %d devices", c.value, c.n)
		if c.note == "" {
			assert.Empty(t, note, "%q", c.value)
		} else {
			assert.Contains(t, note, c.note, "%q", c.value)
		}
	}
}

var mluUUIDs = []string{
	"MLU-10111213-1415-1617-1819-1a1b1c1d1e1f",
	"MLU-20212223-2425-2627-2829-2a2b2c2d2e2f",
	"MLU-30313233-3435-3637-3839-3a3b3c3d3e3f",
}

// TestCambricon: torch_mlu's _parse_visible_devices (r2.4_develop).
func TestCambricon(t *testing.T) {
	mlu := Cambricon{UUIDPrefix: "MLU-"}
	u := func(i int) string { return strings.TrimPrefix(mluUUIDs[i], "MLU-") }
	for _, c := range []struct {
		value string
		want  []int
	}{
		{"", []int{}},
		{"-1", []int{}},   // not all digits: ends the list
		{"+1", []int{}},   // no sign either
		{"1gpu", []int{}}, // not strtoul: all digits or nothing
		{" 2 ,0", []int{2, 0}},
		{"01", []int{1}},
		{"0,0", []int{}},  // a repeat empties the list
		{"0,00", []int{}}, // ... as int() reads it
		{"1,5,2", []int{1}},
		{u(2) + "," + u(0), []int{2, 0}},
		{u(2), []int{2}},
		{u(2)[:20], []int{}},         // under 36 characters: read as indexes
		{u(2) + ",1", []int{2}},      // an entry without '-' ends a UUID list
		{u(2) + "," + u(2), []int{}}, // a repeat empties it
		{u(1) + ",ffffffff-0000-0000-0000-0000", []int{1}}, // unmatched ends it
		{"MLU-" + u(1), []int{}},                           // the "MLU-" form is not the variable's
	} {
		t.Run(fmt.Sprintf("%q", c.value), func(t *testing.T) {
			sel, err := mlu.Select(c.value, poolOf(3, mluUUIDs))
			require.NoError(t, err)
			assert.Equal(t, c.want, sel.Positions)
		})
	}
	_, err := mlu.Select(u(0), poolOf(3, nil))
	assert.ErrorIs(t, err, ErrUndecidable)
}

func TestOrdinals(t *testing.T) {
	o := Ordinals{Source: "the vendor"}
	sel, err := o.Select("2,0", poolOf(3, nil))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0}, sel.Positions)
	for _, v := range []string{"", " ", "-1", "+1", " 1", "01", "1,1", "3", "GPU-1", "1,", "a"} {
		_, err := o.Select(v, poolOf(3, nil))
		assert.ErrorIs(t, err, ErrUndecidable, "%q", v)
	}
	sel, err = Ordinals{EmptyHides: true}.Select("  ", poolOf(3, nil))
	require.NoError(t, err)
	assert.Empty(t, sel.Positions, "Paddle: an all-space value shows nothing")
}

// fuzzPool is a pool of n devices, some with UUIDs, some partitioned.
func fuzzPool(n int, flags uint8) Pool {
	p := Pool{Partitions: flags&4 != 0}
	for i := 0; i < n; i++ {
		d := Device{}
		if flags&1 != 0 {
			d.UUID = fmt.Sprintf("GPU-%016x", uint64(i)*0x1111111111111111)
		}
		if flags&2 != 0 && i%2 == 0 {
			d.Partitioned = true
		}
		p.Devices = append(p.Devices, d)
		p.at = append(p.at, i)
	}
	if flags&2 != 0 {
		for i := 0; i < n; i += 2 {
			p.Devices = append(p.Devices, Device{UUID: fmt.Sprintf("MIG-%08x", i), Partition: true, Parent: i})
			p.at = append(p.at, len(p.at))
		}
	}
	return p
}

var fuzzDialects = []Dialect{cudaDialect, CUDA{UUIDPrefix: "GCU-", Undecidable: []string{"DRS-"}}, ROCR{}, CLR{}, AscendRT{}, Cambricon{UUIDPrefix: "MLU-"}, Ordinals{}, Ordinals{EmptyHides: true}}

// FuzzDialects: no value makes a parser panic or select an impossible set,
// and what Format writes for a selection reads back as that selection.
func FuzzDialects(f *testing.F) {
	for _, s := range []string{"", "0", "-1", "1,0", "GPU-8a", "MIG-1", "MIG-00000000", "0x1,010", "GPU-BABA,3", "1gpu2,2", ",", "9999999999999999999999", "DRS-1", "0,0"} {
		for d := range fuzzDialects {
			f.Add(s, uint8(4), uint8(d), uint8(7))
		}
	}
	f.Fuzz(func(t *testing.T, value string, n, d, flags uint8) {
		p := fuzzPool(int(n%9), flags)
		dl := fuzzDialects[int(d)%len(fuzzDialects)]
		sel, err := dl.Select(value, p)
		if err != nil {
			if !errors.Is(err, ErrUndecidable) {
				t.Fatalf("%T %q: unexpected error %v", dl, value, err)
			}
			return
		}
		seen := map[int]bool{}
		for _, i := range sel.Positions {
			if i < 0 || i >= len(p.Devices) || seen[i] {
				t.Fatalf("%T %q: bad selection %v of %d", dl, value, sel.Positions, len(p.Devices))
			}
			seen[i] = true
		}
		if len(sel.Positions) == 0 {
			return
		}
		v, err := dl.Format(p, sel.Positions)
		if err != nil {
			if !errors.Is(err, ErrSelection) && !errors.Is(err, ErrUndecidable) {
				t.Fatalf("%T: Format(%v): %v", dl, sel.Positions, err)
			}
			return
		}
		back, err := dl.Select(v, p)
		if err != nil || fmt.Sprint(back.Positions) != fmt.Sprint(sel.Positions) {
			t.Fatalf("%T: %q selects %v; Format wrote %q, which selects %v (%v)", dl, value, sel.Positions, v, back.Positions, err)
		}
	})
}
