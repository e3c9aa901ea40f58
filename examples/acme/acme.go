package acme

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/device/devicetest"
	"github.com/flagos-ai/flagshim/probe"
)

// Type is the device type of the acme backend, and the name of its probe.
const Type device.Type = "acme"

// Environment variables read by the steps (inside flagshim.Init, never in
// init).
const (
	EnvDevices    = "ACME_DEVICES"
	EnvCUDACompat = "ACME_CUDA_COMPAT"
)

// Step names, in the drivers and vendor_compat phases.
const (
	StepDrivers    = "acme"
	StepCUDACompat = "acme_cuda_compat"
)

// MemoryPerDevice is the TotalMemory each fake device reports.
const MemoryPerDevice = 16 << 30

var (
	regOnce sync.Once
	regErr  error
)

func init() {
	// The error, if any, is kept for Register to return; see the package
	// documentation.
	_ = Register()
}

// Register adds acme's steps to flagshim's default plan. It is called by the
// package's init; calling it again does nothing and returns the first
// attempt's error, which wraps flagshim.ErrInitDone when flagshim.Init had
// already started. It is safe for concurrent use.
func Register() error {
	regOnce.Do(func() {
		err := flagshim.AddStep(flagshim.PhaseDrivers, StepDrivers, registerBackend)
		if err == nil {
			err = flagshim.AddStep(flagshim.PhaseVendorCompat, StepCUDACompat, cudaCompat)
		}
		if err != nil {
			regErr = fmt.Errorf("acme: %w", err)
		}
	})
	return regErr
}

// registerBackend is the drivers/acme step: the backend goes into
// device.Default, its original probe into probe.Default. Inside a step, use
// the registries' Register methods only: device.Parse and device.Lookup on
// device.Default wait for Init, which is running this step.
func registerBackend(context.Context) error {
	b, err := FromEnv()
	if err != nil {
		return err
	}
	if err := device.Default.Register(b); err != nil {
		return err
	}
	return probe.Default.Register(string(Type), b.Available)
}

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

// Backend is the fake acme accelerator: the flagshim test double
// (device/devicetest) configured as acme's devices, so it offers the whole
// device model (memory, modules of Go kernels, streams) to code that asks
// for cuda on an acme-only machine. It is safe for concurrent use.
type Backend struct {
	*devicetest.Backend
	n int
}

var (
	_ device.Backend   = (*Backend)(nil)
	_ device.Describer = (*Backend)(nil)
	_ device.Memory    = (*Backend)(nil)
	_ device.Compute   = (*Backend)(nil)
)

// New returns an acme backend with n devices (n <= 0: not available).
func New(n int) *Backend {
	n = max(n, 0)
	c := devicetest.Config{Type: Type}
	if n == 0 {
		c.Unavailable = "acme: no devices (" + EnvDevices + "=0)"
	}
	for i := range max(n, 1) {
		c.Devices = append(c.Devices, devicetest.Device{
			Name: "Acme A1", Vendor: "Acme", UUID: fmt.Sprintf("acme-0000-0000-0000-%012d", i), Memory: MemoryPerDevice,
			Major: 1, Minor: 0, MultiProcessors: 32,
		})
	}
	return &Backend{Backend: devicetest.New(c), n: n}
}

// FromEnv returns a backend with ACME_DEVICES devices (1 when unset or
// empty).
func FromEnv() (*Backend, error) {
	v := strings.TrimSpace(os.Getenv(EnvDevices))
	if v == "" {
		return New(1), nil
	}
	n, err := strconv.ParseUint(v, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("acme: %s=%q: want a number of devices, 0 to 65535", EnvDevices, os.Getenv(EnvDevices))
	}
	return New(int(n)), nil
}

// Available is acme's original probe.
func (b *Backend) Available() probe.Result {
	if b.n == 0 {
		return b.Backend.Available()
	}
	return probe.Result{Available: true, Devices: b.n, Reason: fmt.Sprintf("%d fake acme devices (%s)", b.n, EnvDevices)}
}

// Describe says where the backend came from: no library (pure Go).
func (b *Backend) Describe() device.Info {
	return device.Info{
		DriverVersion: "1.0",
		Extra:         map[string]string{"source": "github.com/flagos-ai/flagshim/examples/acme (pure Go, the devicetest double)"},
	}
}
