package drivertest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
)

// dryMatches checks FactsWithoutLoading against the exact tier's answer
// in the case's own environment. b is the case's backend, loaded by its
// check already (or loaded here): where no library would be opened, a
// fresh backend's dry answer is the exact answer, field for field, and
// opens nothing; where one would be, the dry answer declines.
func dryMatches(t *testing.T, s *Suite, b *driver.Backend) {
	t.Helper()
	dry, ok := s.New().FactsWithoutLoading()
	exact := b.ExactFacts(false)
	if !ok {
		assert.NotEmpty(t, exact.Library, "the dry answer declined, but the exact tier opened no library: %s", exact.Result.Reason)
		return
	}
	require.Empty(t, exact.Library, "the dry answer says no library is opened, but the exact tier opened %s", exact.Library)
	assert.Equal(t, exact, dry, "the dry answer is the exact tier's, field for field")
	assert.False(t, dry.Result.Available)
	assert.NotEmpty(t, dry.Result.Reason)
}
