package flagshim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/tier/isolated"
	"github.com/flagos-ai/flagshim/vendors"
)

// TestOwnedVariables: every variable the settings read that no vendor
// declares is flagshim's own, which the vendor registry refuses to any
// vendor (vendors.ErrOwnedVariable): a vendor naming its library override
// FLAGOS_PROBE once made every later Init fail. The list is the registry's
// (it cannot import this package); this test keeps the two the same.
func TestOwnedVariables(t *testing.T) {
	theirs := map[string]bool{}
	for _, v := range vendors.All() {
		for _, x := range v.Variables() {
			theirs[x.Name] = true
		}
	}
	owned := vendors.OwnedVariables()
	n := 0
	for _, x := range flagshim.Variables() {
		if !theirs[x.Name] {
			assert.Contains(t, owned, x.Name, "a setting of flagshim's that the vendor registry does not keep for it")
			n++
		}
	}
	assert.GreaterOrEqual(t, n, 8, "flagshim's own settings were found: FLAGOS_PROBE, FLAGOS_BACKEND, ...")
	assert.Contains(t, owned, isolated.EnvVar, "the isolated tier's child marker")
}
