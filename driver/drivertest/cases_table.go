package drivertest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// kinds are the vendor-neutral errors a result code can mean. They exclude
// each other: a code means one of them at most (an allocation that fails
// is out of memory, not an invalid value as well), so that a program
// asking errors.Is(err, device.ErrOutOfMemory) is never told yes for
// another failure. The driver's finer sentinels (driver.ErrNoDevice,
// driver.ErrStubLibrary, ...) refine one of these or stand alone.
var kinds = []error{
	device.ErrNotAvailable, device.ErrInvalidIndex, device.ErrOutOfMemory, device.ErrNotFound,
	device.ErrNotSupported, device.ErrInvalidValue, device.ErrInvalidImage, device.ErrLaunchFailed,
	device.ErrNotReady, device.ErrReleased,
}

// kindNames are kinds' names in messages.
var kindNames = map[error]string{
	device.ErrNotAvailable: "device.ErrNotAvailable", device.ErrInvalidIndex: "device.ErrInvalidIndex",
	device.ErrOutOfMemory: "device.ErrOutOfMemory", device.ErrNotFound: "device.ErrNotFound",
	device.ErrNotSupported: "device.ErrNotSupported", device.ErrInvalidValue: "device.ErrInvalidValue",
	device.ErrInvalidImage: "device.ErrInvalidImage", device.ErrLaunchFailed: "device.ErrLaunchFailed",
	device.ErrNotReady: "device.ErrNotReady", device.ErrReleased: "device.ErrReleased",
}

// fakeMeanings are what the fake's codes (fake_common.h's, CUDA's numbers;
// Suite.Codes gives the vendor's) mean: the fake returns each where a
// driver reports that failure, so the vendor's table must give the
// vendor's code that meaning and no other.
var fakeMeanings = map[int]error{
	1: device.ErrInvalidValue, 2: device.ErrOutOfMemory, 101: device.ErrInvalidIndex,
	200: device.ErrInvalidImage, 218: device.ErrInvalidImage, 500: device.ErrNotFound,
	600: device.ErrNotReady, 700: device.ErrLaunchFailed, 719: device.ErrLaunchFailed,
}

// kindsOf are the kinds among sentinels.
func kindsOf(sentinels []error) []string {
	var out []string
	for _, k := range kinds {
		if slices.Contains(sentinels, k) {
			out = append(out, kindNames[k])
		}
	}
	return out
}

// resultsOneSentinel: every result code of the vendor's table means one
// neutral error at most, and the codes its fake returns for a failure
// mean that failure alone.
func resultsOneSentinel(t *testing.T, s *Suite) {
	for code, r := range s.Vendor.Results {
		if k := kindsOf(r.Is); len(k) > 1 {
			t.Errorf("%s (%d) means %v at once: each code means one neutral error (an errors.Is on one would be true for another failure)",
				s.Vendor.ResultName(code), code, k)
		}
	}
	for _, c := range slices.Sorted(func(yield func(int) bool) {
		for c := range fakeMeanings {
			if !yield(c) {
				return
			}
		}
	}) {
		code := s.code(c)
		r, ok := s.Vendor.Results[code]
		if !ok {
			continue // a code the vendor has no meaning for is matched by no sentinel
		}
		want := fakeMeanings[c]
		assert.Equal(t, []string{kindNames[want]}, kindsOf(r.Is),
			"%s (%d) is what the vendor's library returns for %s (the fake's %d)", s.Vendor.ResultName(code), code, kindNames[want], c)
	}
}

// onlyKind checks that err means want and no other neutral error.
func onlyKind(t *testing.T, err error, want error, msgAndArgs ...any) {
	t.Helper()
	if !assert.ErrorIs(t, err, want, msgAndArgs...) {
		return
	}
	for _, k := range kinds {
		if k != want && errors.Is(err, k) {
			t.Errorf("%v means %s and %s at once: %s", err, kindNames[want], kindNames[k], fmt.Sprint(msgAndArgs...))
		}
	}
}

// newDoesNoIO: the package's constructor makes a backend of its Vendor and
// opens nothing: importing and constructing load no library.
func newDoesNoIO(t *testing.T, s *Suite) {
	ctor := s.NewBackend
	if ctor == nil {
		ctor = func(opts ...driver.Option) *driver.Backend { return driver.New(s.Vendor, opts...) }
	}
	b := ctor()
	assert.Equal(t, s.typ(), b.Type())
	assert.Same(t, s.Vendor, b.Vendor())
	assert.False(t, b.Loaded(), "New and Type open nothing")
}

// kitFeatures are the features driver.Vendor.Unbound can name: what a
// case's needs may say.
func kitFeatures() []string { return (&driver.Vendor{}).Unbound() }
