package driver

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// paramValue, the direct launch's inlined reading, agrees with argValue
// wherever it answers, and leaves to argValue every other type and every
// size that differs from the kernel's parameter (argValue's errors).
func TestParamValue(t *testing.T) {
	cases := []struct {
		name string
		a    any
		want uint16
		ok   bool
	}{
		{"device.Ptr", device.Ptr(0xdead_beef_0000), 8, true},
		{"uint32", uint32(1000), 4, true},
		{"int32, negative", int32(-2), 4, true},
		{"uint64", uint64(1 << 40), 8, true},
		{"float32", float32(0.5), 4, true},
		{"float64", float64(2.5), 8, true},
		{"uint32 for 8 bytes", uint32(1), 8, false},
		{"device.Ptr for 4 bytes", device.Ptr(1), 4, false},
		{"float64 for 4 bytes", 2.5, 4, false},
		{"int64: argValue's", int64(-1), 8, false},
		{"int8: argValue's", int8(-1), 1, false},
		{"uintptr: argValue's", uintptr(7), 8, false},
		{"int: argValue refuses it", 1, 8, false},
		{"a string: argValue refuses it", "x", 8, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := paramValue(tc.a, tc.want)
			assert.Equal(t, tc.ok, ok)
			if ok {
				w, err := argValue(0, tc.a, tc.want)
				assert.NoError(t, err)
				assert.Equal(t, w, v, "paramValue and argValue read %v alike", tc.a)
			}
		})
	}
	v, _ := paramValue(float32(0.5), 4)
	assert.Equal(t, uint64(math.Float32bits(0.5)), v, "a float32's bits, in the slot's low half")
}

// A function launches the direct way exactly where its launch is
// prepared and the driver told at most clib.MaxParams parameters.
func TestFunctionDirect(t *testing.T) {
	var launch clib.Func
	launch.Bind("libcuda.so.1", "cuLaunchKernel", "", 0x1000) // never called here
	prepared := launch.Prepare(nil, 0)
	cases := []struct {
		name    string
		call    clib.Prepared
		nparams int
		want    bool
	}{
		{"prepared, 3 parameters", prepared, 3, clib.StackLists},
		{"prepared, none", prepared, 0, clib.StackLists},
		{"prepared, MaxParams", prepared, clib.MaxParams, clib.StackLists},
		{"prepared, MaxParams+1: a launch buffer", prepared, clib.MaxParams + 1, false},
		{"prepared, more than Launch takes", prepared, MaxLaunchArgs + 1, false},
		{"prepared, the count not told", prepared, -1, false},
		{"not prepared", clib.Prepared{}, 3, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &Function{call: tc.call, nparams: tc.nparams}
			assert.Equal(t, tc.want, f.direct())
		})
	}
}
