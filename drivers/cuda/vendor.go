package cuda

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/gpudrv"
)

// What sets CUDA apart from the other drivers of the cu*/mu* family. The
// rest of the package (zdriver.go, zfake_test.go) is generated from this
// file; -version is a driver version number as the driver reports it
// (testdata's FAKE_DEFAULT_VERSION), for DriverVersion's doc and the fake
// tests.
//go:generate go run ../../internal/gpudrv/gen -version 13000

// EnvVar names the variable that overrides the library search with an
// absolute path.
const EnvVar = "FLAGOS_LIBCUDA_PATH"

// VisibleDevicesEnv is applied by the driver itself; the backend only
// reports it (Describe().Extra).
const VisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"

var vendor = &gpudrv.Vendor{
	Type:        device.CUDA,
	Pkg:         "cuda",
	VendorName:  "NVIDIA",
	SymPrefix:   "cu",
	ErrPrefix:   "CUDA_",
	VisibleEnv:  VisibleDevicesEnv,
	UUIDPrefix:  "GPU-",
	VersionBase: 1000,
	Spec:        defaultSpec(),
	Errors:      errs,
}

func defaultSpec() dl.Spec {
	return dl.Spec{
		Name:    "libcuda",
		EnvVar:  EnvVar,
		Sonames: []string{"libcuda.so.1", "libcuda.so"},
		Dirs:    []string{"/usr/local/nvidia/lib64", gpudrv.MultiarchLibDir, "/usr/lib64", "/usr/lib/wsl/lib"},
	}
}

// LibrarySpec is how this package looks for libcuda. Code that must open the
// same library itself (plugins/nvshmem makes a primary context current around
// NVSHMEM calls) uses it, so both always open the same file, override and
// search alike. getenv nil means os.Getenv.
func LibrarySpec(getenv func(string) string) dl.Spec {
	s := defaultSpec()
	s.Getenv = getenv
	return s
}
