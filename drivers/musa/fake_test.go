package musa

import (
	"testing"

	"github.com/flagos-ai/flagshim/driver/drivertest"
)

func TestMain(m *testing.M) { drivertest.Main(m) }

// TestFakes runs the driver core's conformance cases against the fake
// libmusa.so.1 (testdata/fake_libmusa.c: the kit's fake_cufamily.c under
// MUSA's names).
func TestFakes(t *testing.T) {
	(&drivertest.Suite{Vendor: Vendor(), NewBackend: New, Version: [2]int{3, 1}, Presence: mtmlPresence}).Test(t)
}
