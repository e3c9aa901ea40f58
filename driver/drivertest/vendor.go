package drivertest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// What the kit reads of the vendor under test. The cases ask what the
// core declares supported (driver.Vendor.Unbound: a feature of which the
// vendor names no function is missing from any library, and its calls are
// device.ErrNotSupported) and nothing more: a case that needs a feature
// the core declares unsupported does not apply (see fakeCase.needs), and
// the cases that do apply check the rest of what the vendor binds by the
// same rule.

// supports reports whether the core declares every one of features
// supported for the vendor: none is among Vendor.Unbound()'s. "modules"
// also needs a module loader (OpModuleLoadData or OpModuleLoadDataEx).
func (s *Suite) supports(features ...string) bool { return s.lacking(features...) == "" }

// lacking is the first of features the core declares unsupported for the
// vendor, "" when none.
func (s *Suite) lacking(features ...string) string {
	unbound := s.Vendor.Unbound()
	for _, f := range features {
		if slices.Contains(unbound, f) {
			return f
		}
		if f == "modules" && !s.binds(driver.OpModuleLoadData) && !s.binds(driver.OpModuleLoadDataEx) {
			return f
		}
	}
	return ""
}

// notApplicable says why a case that needs features does not apply to the
// vendor ("" when it does).
func (s *Suite) notApplicable(features []string) string {
	if f := s.lacking(features...); f != "" {
		return fmt.Sprintf("does not apply: the core declares %s unsupported for %s (driver.Vendor.Unbound: %s)",
			f, s.typ(), strings.Join(s.Vendor.Unbound(), ", "))
	}
	return ""
}

// binds reports whether the vendor names a function or an adapter for
// every one of ops: what a case may expect of a full fake.
func (s *Suite) binds(ops ...driver.Op) bool {
	for _, op := range ops {
		if len(s.Vendor.Symbols[op]) == 0 && s.Vendor.Adapters[op] == nil {
			return false
		}
	}
	return true
}

// launches reports whether the core runs the vendor's kernels: modules and
// launches supported. A vendor whose launch model has no mapping from
// CUDA's grid and block binds no OpLaunchKernel: its Launch reports
// device.ErrNotSupported, and the cases check that instead of running
// kernels.
func (s *Suite) launches() bool { return s.supports("modules", "launches") }

// code is the vendor's code for fake_common.h's code c (Codes).
func (s *Suite) code(c int) int {
	if v, ok := s.Codes[c]; ok {
		return v
	}
	return c
}

// deviceName is the name device i has when the fake names its devices
// names (FAKE_DEVICE_NAMES): its own, or the first for a SharedName vendor.
func (s *Suite) deviceName(names []string, i int) string {
	if s.SharedName {
		return names[0]
	}
	return names[i]
}

// hasErrorString reports whether the vendor binds a function that
// describes a code (OpErrorString); without one, errors carry no message.
func (s *Suite) hasErrorString() bool { return s.binds(driver.OpErrorString) }

// stubCode is the vendor's result code for a stub library (CUDA's 34), if
// it has one.
func (s *Suite) stubCode() (int, bool) {
	for _, c := range slices.Sorted(func(yield func(int) bool) {
		for c := range s.Vendor.Results {
			if !yield(c) {
				return
			}
		}
	}) {
		if slices.Contains(s.Vendor.Results[c].Is, driver.ErrStubLibrary) {
			return c, true
		}
	}
	return 0, false
}

// sym is the vendor's preferred name of op, or, where the vendor names no
// function for it, the operation's own name, as the core's messages give
// it ("OpModuleUnload").
func (s *Suite) sym(op driver.Op) string {
	if names := s.Vendor.Symbols[op]; len(names) > 0 {
		return names[0]
	}
	return op.String()
}

// syms are all the vendor's names of op.
func (s *Suite) syms(op driver.Op) []string { return s.Vendor.Symbols[op] }

func (s *Suite) envVar() string   { return s.Vendor.Library.EnvVar }
func (s *Suite) lib() string      { return s.Vendor.Library.Name }
func (s *Suite) typ() device.Type { return s.Vendor.Type }

// visibleEnv is the vendor's first visible-devices variable, "" for a
// vendor that has none (driver.Vendor.Validate accepts it).
func (s *Suite) visibleEnv() string {
	if len(s.Vendor.VisibleEnv) == 0 {
		return ""
	}
	return s.Vendor.VisibleEnv[0]
}
