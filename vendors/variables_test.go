package vendors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/drivers/cuda"
)

// vendorWith is a valid vendor of type t whose library override is lib,
// with vars and visible added.
func vendorWith(t device.Type, lib string, vars []driver.Var, visible ...string) *driver.Vendor {
	v := cuda.Family("acme", "ACME_")
	v.Type, v.Name = t, "Acme"
	v.Library.Name, v.Library.EnvVar, v.Library.Sonames = "libacme", lib, []string{"libacme.so.1"}
	v.Vars, v.VisibleEnv = vars, visible
	v.Presence, v.Runtimes, v.PCIVendors = nil, nil, nil
	return v
}

// TestRegisterRefusesOwnedVariables: a vendor that names one of flagshim's
// variables, or another vendor's, in any of its roles would change what
// that variable means for every later Init: Register refuses it.
func TestRegisterRefusesOwnedVariables(t *testing.T) {
	other := func(name string) []driver.Var { return []driver.Var{{Name: name, Kind: driver.VarOther}} }
	tests := []struct {
		name string
		v    *driver.Vendor
		want string
	}{
		{"library override FLAGOS_PROBE", vendorWith("acme", "FLAGOS_PROBE", nil), "its library override FLAGOS_PROBE is flagshim's own (the probe tier)"},
		{"library override FLAGOS_BACKEND", vendorWith("acme", "FLAGOS_BACKEND", nil), "FLAGOS_BACKEND is flagshim's own"},
		{"another variable FLAGOS_LOG", vendorWith("acme", "FLAGOS_LIBACME_PATH", other("FLAGOS_LOG")), "its variable FLAGOS_LOG is flagshim's own"},
		{"visible FLAGOS_ALIAS_CUDA", vendorWith("acme", "FLAGOS_LIBACME_PATH", nil, "FLAGOS_ALIAS_CUDA"), "its visible-devices variable FLAGOS_ALIAS_CUDA is flagshim's own"},
		{"nvshmem's override", vendorWith("acme", "FLAGOS_LIBNVSHMEM_PATH", nil), "plugins/nvshmem's library override"},
		{"FLAGOS_ namespace", vendorWith("acme", "FLAGOS_LIBACME_PATH", other("FLAGOS_ACME_MODE")), "FLAGOS_ namespace"},
		{"FLAGSHIM_ namespace", vendorWith("acme", "FLAGSHIM_ACME", nil), "FLAGSHIM_ namespace"},
		{"cuda's library override", vendorWith("acme", "FLAGOS_LIBCUDA_PATH", nil), "its library override FLAGOS_LIBCUDA_PATH is the cuda vendor's library override"},
		{"NVML's override", vendorWith("acme", "FLAGOS_LIBACME_PATH", []driver.Var{{Name: "FLAGOS_LIBNVML_PATH", Kind: driver.VarLibraryPath}}), "the cuda vendor's library override"},
		{"another's visible variable as a library", vendorWith("acme", "CUDA_VISIBLE_DEVICES", nil), "is the cuda vendor's visible-devices variable"},
		{"a library override as visible", vendorWith("acme", "FLAGOS_LIBACME_PATH", nil, "FLAGOS_LIBMUSA_PATH"), "the musa vendor's library override"},
		{"twice", vendorWith("acme", "FLAGOS_LIBACME_PATH", nil, "ACME_VISIBLE_DEVICES", "ACME_VISIBLE_DEVICES"), "declares ACME_VISIBLE_DEVICES twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Register(tc.v)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrOwnedVariable)
			assert.ErrorContains(t, err, tc.want)
			assert.ErrorContains(t, err, `vendor "acme"`)
		})
	}
	for _, name := range OwnedVariables() {
		assert.ErrorIs(t, Register(vendorWith("acme", name, nil)), ErrOwnedVariable, name)
	}

	// A visible-devices variable another runtime reads too is shared, as
	// HIP's and MACA's runtimes share CUDA's: accepted.
	require.NoError(t, Register(vendorWith("acme", "FLAGOS_LIBACME_PATH", nil, "ACME_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")))
	_, ok := Lookup("acme")
	assert.True(t, ok)
	assert.ErrorIs(t, Register(vendorWith("acme2", "FLAGOS_PROBE", nil)), ErrOwnedVariable,
		"flagshim's own variables are refused as such before the registry's closing is")
}
