package presence_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// fakeML is a made-up management library: Env.Open's reasons name its
// file and its override variable, whatever the vendor.
var fakeML = clib.Library{
	Name:    "libfakeml",
	EnvVar:  "FLAGOS_LIBFAKEML_PATH",
	Sonames: []string{"libfakeml.so.1", "libfakeml.so"},
	Dirs:    []string{"/nonexistent/presence-test"},
}

// absent is fakeML's search made to find nothing, in a folder of the test.
func absent(dir string) presence.Option {
	return presence.WithSearch(func(l *clib.Library) {
		l.Sonames = []string{"libfakeml-presence-absent.so.1"}
		l.Dirs = []string{dir}
	})
}

func TestOpenNotFound(t *testing.T) {
	dir := dltest.PrivateDir(t)
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()), absent(dir))
	var r presence.Report
	h := e.Open(fakeML, &r)
	assert.Nil(t, h)
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.ErrorIs(t, r.Err, clib.ErrNotFound)
	assert.Equal(t, "libfakeml.so.1 not found (tried libfakeml-presence-absent.so.1); install the driver's management library or set FLAGOS_LIBFAKEML_PATH=/abs/path/to/libfakeml.so.1", r.Reason,
		"the advice names the library's own file, whatever a test searches instead")
	require.Len(t, r.Attempts, 1, "a folder without the file is no attempt")
	assert.Equal(t, "libfakeml-presence-absent.so.1", r.Attempts[0].Path)
	assert.Contains(t, r.Attempts[0].Error, "not found in LD_LIBRARY_PATH", "the attempt says where the loader's search looked")
	assert.Equal(t, "", r.Library)
	assert.False(t, r.Available())
}

func TestOpenNothingToTry(t *testing.T) {
	lib := clib.Library{Name: "libfakeml", EnvVar: "FLAGOS_LIBFAKEML_PATH"}
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup()))
	var r presence.Report
	assert.Nil(t, e.Open(lib, &r))
	assert.ErrorIs(t, r.Err, presence.ErrNoLibrary)
	assert.Contains(t, r.Reason, "libfakeml.so", "without sonames the file is the name's .so")
}

func TestOpenRelativeOverride(t *testing.T) {
	// The search is replaced, the override is not: a search that sets
	// another variable changes nothing.
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(fakeML.EnvVar, "lib/libfakeml.so.1")),
		presence.WithSearch(func(l *clib.Library) { l.EnvVar = "" }))
	var r presence.Report
	assert.Nil(t, e.Open(fakeML, &r))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.ErrorIs(t, r.Err, clib.ErrRelativeOverride)
	assert.Equal(t, `FLAGOS_LIBFAKEML_PATH="lib/libfakeml.so.1" cannot be used: the path must be absolute; set FLAGOS_LIBFAKEML_PATH=/abs/path/to/libfakeml.so.1 or unset it to search the usual places`, r.Reason)
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, "lib/libfakeml.so.1", r.Attempts[0].Path)
}

func TestOpenOverrideInOpenFolder(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777))
	p := filepath.Join(dir, "libfakeml.so.1")
	require.NoError(t, os.WriteFile(p, []byte("not loaded: the folder is checked first"), 0o644))
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(fakeML.EnvVar, p)))
	var r presence.Report
	assert.Nil(t, e.Open(fakeML, &r))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride)
	assert.ErrorIs(t, r.Err, clib.ErrUnsafePath)
	assert.Contains(t, r.Reason, `FLAGOS_LIBFAKEML_PATH="`+p+`" cannot be used: `)
	assert.Contains(t, r.Reason, "chmod o-w")
	require.Len(t, r.Attempts, 1)
	assert.Equal(t, p, r.Attempts[0].Path)
}

func TestOpenOverrideNotELF(t *testing.T) {
	dir := dltest.PrivateDir(t)
	p := filepath.Join(dir, "libfakeml.so.1")
	require.NoError(t, os.WriteFile(p, []byte("not a shared object"), 0o644))
	e := presence.NewEnv(presence.WithLookupEnv(presencetest.Lookup(fakeML.EnvVar, p)))
	var r presence.Report
	assert.Nil(t, e.Open(fakeML, &r))
	assert.ErrorIs(t, r.Err, presence.ErrBadOverride, "an override that cannot be loaded is refused, with no fallback")
	assert.Contains(t, r.Reason, `FLAGOS_LIBFAKEML_PATH="`+p+`" cannot be used: `)
	require.Len(t, r.Attempts, 1)
}
