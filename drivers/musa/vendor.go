package musa

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/gpudrv"
)

// What sets MUSA apart from the other drivers of the cu*/mu* family. The
// rest of the package (zdriver.go, zfake_test.go) is generated from this
// file; -version is a driver version number as the driver reports it
// (testdata's FAKE_DEFAULT_VERSION), for DriverVersion's doc and the fake
// tests.
//go:generate go run ../../internal/gpudrv/gen -version 30100

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBMUSA_PATH"

// VisibleDevicesEnv is applied by the driver itself; the backend only
// reports it (Describe().Extra).
const VisibleDevicesEnv = "MUSA_VISIBLE_DEVICES"

var vendor = &gpudrv.Vendor{
	Type:        device.MUSA,
	Pkg:         "musa",
	VendorName:  "Moore Threads",
	SymPrefix:   "mu",
	ErrPrefix:   "MUSA_",
	VisibleEnv:  VisibleDevicesEnv,
	UUIDPrefix:  "",
	VersionBase: 10000,
	Spec:        defaultSpec(),
	Errors:      errs,
}

func defaultSpec() dl.Spec {
	return dl.Spec{
		Name:    "libmusa",
		EnvVar:  EnvVar,
		Sonames: []string{"libmusa.so.1", "libmusa.so"},
		Dirs:    []string{"/usr/local/musa/lib", "/usr/local/musa/lib64", "/opt/musa/lib*"},
	}
}
