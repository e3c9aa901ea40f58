package nvshmem

import (
	"os"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// TestAttach: Attach finds the copy of NVSHMEM the host loaded (never loading
// one itself), refuses one that is not initialized, and leaves NVSHMEM to
// the host on Finalize.
func TestAttach(t *testing.T) {
	if !dltest.IsChild(t) {
		env := buildFakes(t)
		dltest.MustChild(t, t.Name(), append(env, "ATTACH_CASE=not_loaded")...)
		dltest.MustChild(t, t.Name(), append(env, "ATTACH_CASE=host")...)
		return
	}
	if os.Getenv("ATTACH_CASE") == "not_loaded" {
		_, err := Attach()
		require.ErrorIs(t, err, ErrNotLoaded, "nothing loaded it, and Attach loads nothing")
		assert.ErrorContains(t, err, Soname)
		return
	}
	// The host loads NVSHMEM itself.
	_, err := purego.Dlopen(os.Getenv(EnvVar), purego.RTLD_NOW|purego.RTLD_GLOBAL)
	require.NoError(t, err)
	_, err = Attach()
	require.ErrorIs(t, err, ErrNotInitialized, "loaded but not initialized")

	// The host initializes it (here through the plugin, as nvshmem4py would).
	host, err := Open()
	require.NoError(t, err)
	uid, err := host.GetUniqueID()
	require.NoError(t, err)
	require.NoError(t, host.InitUniqueID(0, 1, uid))

	l, err := Attach()
	require.NoError(t, err)
	assert.Equal(t, host.Path, l.Path, "the host's very copy")
	assert.Equal(t, StatusInitialized, l.InitStatus())
	assert.Equal(t, 1, l.NPEs())
	require.NoError(t, l.Finalize())
	assert.Equal(t, StatusInitialized, host.InitStatus(), "an attached Lib never finalizes the host's NVSHMEM")
	require.NoError(t, host.Finalize())
}
