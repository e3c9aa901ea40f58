package flagshim

import (
	"context"
	"errors"
	"fmt"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/flagos"
	"github.com/flagos-ai/flagshim/vendors"
)

// driverSteps are the built-in steps of the drivers phase: one per
// registered vendor (vendors.Vendors: flagshim's own, then those other
// modules registered), each registering a backend and its original probe,
// then flagos. They open nothing: the vendor drivers load their libraries
// on first use, and flagos decides its route on first use, after plugins'
// drivers steps have registered their backends.
func (s *shim) driverSteps() []step {
	var steps []step
	for _, v := range vendors.All() {
		steps = append(steps, step{PhaseDrivers, string(v.Type), func(context.Context) error {
			return s.registerBackend(driver.New(v, s.vendorOptions(v)...))
		}})
	}
	return append(steps, step{PhaseDrivers, string(device.FlagOS), func(context.Context) error {
		return s.registerBackend(flagos.New(s.devs, flagos.WithLogger(s.log), flagos.WithGetenv(s.getenv),
			flagos.WithAutoOrder(vendors.AutoOrder())))
	}})
}

// addDriverSteps puts the driver steps first in the drivers phase, before
// the steps plugins added. It reads the vendor registry, which closes it.
func (s *shim) addDriverSteps() error {
	var errs []error
	for i, st := range s.driverSteps() {
		if err := s.plan.AddStepAt(st.phase, i, st.name, st.run); err != nil {
			errs = append(errs, fmt.Errorf("flagshim: the %s/%s step of a registered vendor: %w (a plugin added a step of that name; give it another)", st.phase, st.name, err))
		}
	}
	return errors.Join(errs...)
}

// vendorOptions are a vendor driver's options under the settings: the
// logger, the environment, the init timeout, the makers' names, and the
// probe tier's (tierOptions, in tiers.go).
func (s *shim) vendorOptions(v *driver.Vendor) []driver.Option {
	opts := []driver.Option{driver.WithLogger(s.log), driver.WithGetenv(s.getenv), driver.WithInitTimeout(s.set.timeout),
		driver.WithMakers(vendors.Makers()), driver.WithVendorNames(vendors.VendorNames()), driver.WithSysRoot(s.set.root)}
	if v.Type == device.CUDA {
		opts = append(opts, driver.WithUnavailableNote(s.cudaNote))
	}
	return append(opts, s.tierOptions(v, opts)...)
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
	if _, routes := b.(*flagos.Backend); s.cfg.probeAll && !routes {
		// The backend's own once makes the later asks wait for this one.
		// Not flagos's: its route may name a backend a plugin's step
		// registers later in this phase (FLAGOS_BACKEND=acme), so it is
		// decided when first asked, after the phase.
		go b.Available()
	}
	return nil
}

// checkRoute makes a FLAGOS_BACKEND that names no registered backend (or
// cpu, flagos, a malformed name) an error of Init, not a silent "flagos has
// no devices": such a setting changes what cuda means.
func (s *shim) checkRoute() error {
	for _, b := range s.devs.Backends() {
		fl, ok := b.(*flagos.Backend)
		if !ok {
			continue
		}
		// CheckChoice probes nothing: the route is decided when first
		// needed (the alias asks cuda first, flagos only without CUDA).
		if err := fl.CheckChoice(); errors.Is(err, flagos.ErrBadChoice) || errors.Is(err, flagos.ErrUnknownBackend) {
			return fmt.Errorf("%w: %w", ErrBadSetting, err)
		}
	}
	return nil
}
