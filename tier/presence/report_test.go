package presence_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// TestCheckCount: a count above device.MaxDevices (4096) is refused with
// ErrTooManyDevices and a reason naming the count, the function and the
// bound; up to the bound nothing is touched.
func TestCheckCount(t *testing.T) {
	require.Equal(t, 4096, device.MaxDevices)
	for _, n := range []uint64{0, 1, 64, 4095, 4096} {
		r := presence.Report{Source: "fake"}
		assert.True(t, presence.CheckCount(&r, "FAKEML", "fakeCountDevices", n), "%d", n)
		assert.Equal(t, presence.Report{Source: "fake"}, r, "%d: the report is untouched", n)
	}
	for _, n := range []uint64{4097, 3000000, 1<<32 - 1, 1<<64 - 1} {
		r := presence.Report{Source: "fake"}
		assert.False(t, presence.CheckCount(&r, "FAKEML", "fakeCountDevices", n), "%d", n)
		presencetest.TooMany(t, r, n)
		assert.True(t, errors.Is(r.Err, presence.ErrTooManyDevices))
		assert.Contains(t, r.Err.Error(), "fakeCountDevices reported ")
		assert.True(t, strings.HasPrefix(r.Reason, "FAKEML: fakeCountDevices reported "), r.Reason)
	}
	r := presence.Report{}
	presence.CheckCount(&r, "FAKEML", "fakeCountDevices", 1<<32-1)
	assert.Equal(t, "presence: implausible device count: fakeCountDevices reported 4294967295 devices", r.Err.Error())
	assert.Equal(t, "FAKEML: fakeCountDevices reported 4294967295 devices, more than the 4096 flagshim accepts: the library is broken", r.Reason)
}

func TestGuard(t *testing.T) {
	r := func() (r presence.Report) {
		r.Source = "fake"
		defer presence.Guard(&r)
		r.Devices = []presence.Device{{Name: "half-built"}}
		panic("boom")
	}()
	assert.ErrorIs(t, r.Err, presence.ErrPanic)
	assert.Contains(t, r.Err.Error(), "boom")
	assert.Nil(t, r.Devices)
	assert.Equal(t, "fake: internal error: boom", r.Reason)

	r = func() (r presence.Report) {
		defer presence.Guard(&r)
		r.Devices = []presence.Device{{}}
		return r
	}()
	assert.NoError(t, r.Err, "no panic, nothing changed")
	assert.Len(t, r.Devices, 1)
}

func TestReportWords(t *testing.T) {
	assert.Equal(t, "", presence.Visibility("X_VISIBLE_DEVICES", "ignored", false))
	assert.Equal(t, "X_VISIBLE_DEVICES=", presence.Visibility("X_VISIBLE_DEVICES", "", true))
	assert.Equal(t, "X_VISIBLE_DEVICES=0,1", presence.Visibility("X_VISIBLE_DEVICES", "0,1", true))

	assert.Equal(t, "FAKEML sees no device", presence.CountReason("FAKEML", 0, 0, "X=1"))
	assert.Equal(t, "FAKEML sees 1 device", presence.CountReason("FAKEML", 1, 1, ""))
	assert.Equal(t, "FAKEML sees 3 devices", presence.CountReason("FAKEML", 3, 3, "X=0,1,2"))
	assert.Equal(t, "FAKEML sees 3 devices, 0 visible through X=", presence.CountReason("FAKEML", 3, 0, "X="))
	assert.Equal(t, "s", presence.Plural(0))
	assert.Equal(t, "", presence.Plural(1))
	assert.Equal(t, "s", presence.Plural(2))

	assert.False(t, presence.Report{}.Available())
	assert.True(t, presence.Report{Devices: []presence.Device{{}}}.Available())
	assert.False(t, presence.Report{Devices: []presence.Device{{}}, Err: presence.ErrQuery}.Available())
}
