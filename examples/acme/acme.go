package acme

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/vendors"
)

// Type is the device type of the acme backend, and the name of its probe.
const Type device.Type = "acme"

// Acme's environment variables.
const (
	// EnvVar overrides the search for libacme.so.1 with an absolute path
	// (the FLAGOS_LIB<NAME>_PATH convention).
	EnvVar = "FLAGOS_LIBACME_PATH"
	// VisibleDevicesEnv is applied by Acme's runtime to hide devices.
	VisibleDevicesEnv = "ACME_VISIBLE_DEVICES"
	// EnvCUDACompat turns on the vendor_compat step (see the package doc).
	EnvCUDACompat = "ACME_CUDA_COMPAT"
)

// StepCUDACompat is acme's step in the vendor_compat phase.
const StepCUDACompat = "acme_cuda_compat"

// Vendor is Acme's driver API (libacme.so.1, acme*) as data for flagshim's
// driver core. Acme's API mirrors CUDA's driver API with the "acme"
// prefix, as MUSA's does with "mu", so the description starts from
// cuda.Family; a vendor whose API differs writes its own symbol table (see
// drivers/hip). The description is shared and read-only.
func Vendor() *driver.Vendor { return vendor }

var vendor = func() *driver.Vendor {
	v := cuda.Family("acme", "ACME_")
	v.Type, v.Name = Type, "Acme"
	v.Library = clib.Library{
		Name:    "libacme",
		EnvVar:  EnvVar,
		Sonames: []string{"libacme.so.1", "libacme.so"},
		Dirs:    []string{"/opt/acme/lib"},
	}
	v.VersionBase = 1000 // 1000 is 1.0
	v.UUIDPrefix = "ACME-"
	v.VisibleEnv = []string{VisibleDevicesEnv}
	// Acme has no management library: its presence tier counts its device
	// nodes, /dev/acme0, /dev/acme1, ...
	v.DeviceNodes = presence.NodeSpec{What: "/dev/acme*", Dir: "/dev", Prefixes: []string{"acme"}, Visible: VisibleDevicesEnv}
	// Auto is 0: flagos routes to acme only when asked (FLAGOS_BACKEND=acme).
	return v
}()

var (
	regOnce sync.Once
	regErr  error
)

func init() {
	// The error, if any, is kept for Register to return; see the package
	// documentation.
	_ = Register()
}

// Register adds Acme to flagshim's vendors (vendors.Register: its backend,
// its probe in every tier, FLAGOS_BACKEND=acme, its variables) and its
// vendor_compat step to the default plan (flagshim.AddStep). The package's
// init calls it; calling it again does nothing and returns the first
// attempt's error, which wraps vendors.ErrClosed or flagshim.ErrInitDone
// when flagshim.Init had already started. It is safe for concurrent use.
func Register() error {
	regOnce.Do(func() {
		err := vendors.Register(Vendor())
		if err == nil {
			err = flagshim.AddStep(flagshim.PhaseVendorCompat, StepCUDACompat, cudaCompat)
		}
		if err != nil {
			regErr = fmt.Errorf("acme: %w", err)
		}
	})
	return regErr
}

// New returns an Acme backend outside flagshim's registry (driver.New on
// Vendor), for programs that manage their own. It does no I/O.
func New(opts ...driver.Option) *driver.Backend { return driver.New(vendor, opts...) }

// cudaCompat is the vendor_compat/acme_cuda_compat step.
func cudaCompat(context.Context) error {
	on, err := parseBool(EnvCUDACompat, os.Getenv(EnvCUDACompat))
	if err != nil || !on {
		return err
	}
	if !hasProbe(probe.Default, string(device.CUDA)) {
		return nil // no cuda driver linked: there is no cuda probe to claim
	}
	_, err = probe.Default.Redirect(string(device.CUDA), StepCUDACompat, func() probe.Result {
		r := probe.Default.Original(string(Type))
		r.Reason = "acme cuda compat: " + r.Reason
		return r
	})
	return err
}

func hasProbe(r *probe.Registry, name string) bool {
	for _, n := range r.Names() {
		if n == name {
			return true
		}
	}
	return false
}

func parseBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "off", "no":
		return false, nil
	case "1", "true", "on", "yes":
		return true, nil
	}
	return false, fmt.Errorf("acme: %s=%q: want 1/true/on/yes or 0/false/off/no", name, v)
}
