package musa

import (
	"testing"

	"github.com/flagos-ai/flagshim/internal/drivertest"
)

// suite runs the driver core's conformance cases against the fake
// libmusa.so.1 (internal/drivertest/testdata, built with -DFAKE_MU).
var suite = &drivertest.Suite{Vendor: Vendor, Fake: "musa", Version: [2]int{3, 1}, Child: "TestFakeChild"}

func TestMain(m *testing.M) { drivertest.Main(m) }

func TestFakes(t *testing.T)     { suite.Run(t) }
func TestFakeChild(t *testing.T) { suite.ChildMain(t) }
