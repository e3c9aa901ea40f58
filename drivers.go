package flagshim

import (
	"context"
	"fmt"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/drivers/musa"
)

// driverSteps are the built-in steps of the drivers phase: each registers a
// backend and its original probe. They open nothing: the vendor drivers load
// their libraries on first use, and flagos decides its route on first use,
// after plugins' drivers steps have registered their backends.
func (s *shim) driverSteps() []step {
	return []step{
		{PhaseDrivers, string(device.CUDA), func(context.Context) error {
			return s.registerBackend(cuda.New(driver.WithLogger(s.log), driver.WithUnavailableNote(s.cudaNote)))
		}},
		{PhaseDrivers, string(device.MUSA), func(context.Context) error {
			return s.registerBackend(musa.New(driver.WithLogger(s.log)))
		}},
		{PhaseDrivers, string(device.FlagOS), func(context.Context) error {
			return s.registerBackend(flagos.New(s.devs, flagos.WithLogger(s.log)))
		}},
	}
}

// cudaNote is appended to the errors of the cuda backend while CUDA is not
// usable: when the alias was turned off by FLAGOS_ALIAS_CUDA although flagos
// has devices, a failing cuda call says so and how to change it.
func (s *shim) cudaNote() string {
	if p := s.note.Load(); p != nil {
		return *p
	}
	return ""
}

// registerBackend adds b to the shim's device registry and its Available, the
// true probe, to the probe registry under the backend's type.
func (s *shim) registerBackend(b device.Backend) error {
	if err := s.devs.Register(b); err != nil {
		return err
	}
	if err := s.probes.Register(string(b.Type()), b.Available); err != nil {
		return fmt.Errorf("flagshim: the %s backend is registered but its probe is not: %w", b.Type(), err)
	}
	return nil
}
