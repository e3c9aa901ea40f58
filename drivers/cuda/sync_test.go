package cuda

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// Synchronize names the context it waits for where the driver can
// (cuCtxSynchronize_v2, CUDA 13.0): one call, and the calling thread's
// current context stays as it was. A driver without it (before 13.0) gets
// the context made current, then cuCtxSynchronize. Each case runs in a
// child process against the fake libcuda built with or without the symbol;
// the failing ones have the fake's waits return 700.
func TestSynchronizeNamesTheContext(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler (go env CC) to build the fake libcuda")
	}
	for _, c := range []struct {
		name    string
		defines []string
		fail    bool
	}{
		{"cuda13", nil, false},
		{"before13", []string{"-DFAKE_NO_CTX_SYNCHRONIZE_V2"}, false},
		{"cuda13_fails", nil, true},
		{"before13_fails", []string{"-DFAKE_NO_CTX_SYNCHRONIZE_V2"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lib := suite.BuildIn(t, dltest.PrivateDir(t), c.defines...)
			env := []string{EnvVar + "=" + lib, "SYNC_CASE=" + c.name}
			if c.fail {
				env = append(env, "FAKE_SYNC_RESULT=700")
			}
			out := dltest.MustChild(t, "TestSynchronizeNamesTheContextChild", env...)
			if testing.Verbose() {
				t.Log(out)
			}
		})
	}
}

func TestSynchronizeNamesTheContextChild(t *testing.T) {
	if !dltest.IsChild(t) {
		t.Skip("runs only as a child of TestSynchronizeNamesTheContext")
	}
	name := os.Getenv("SYNC_CASE")
	v2 := strings.HasPrefix(name, "cuda13")
	b := New()
	require.True(t, b.Available().Available, b.Available().Reason)
	lib, err := Vendor().Library.Open(nil) // the override: the fake the backend loaded
	require.NoError(t, err)
	var current, syncs clib.Func
	require.NoError(t, lib.Resolve("fake", []clib.Sym{
		{Fn: &current, Names: []string{"fake_current_ordinal"}, Required: true},
		{Fn: &syncs, Names: []string{"fake_context_syncs"}, Required: true},
	}))
	count := func(f *clib.Func) int { return clib.Code(f.Call()) }
	want := "cuCtxSynchronize"
	if v2 {
		want = "cuCtxSynchronize_v2"
	}

	if strings.HasSuffix(name, "_fails") {
		err := b.Synchronize(1)
		var ce *clib.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 700, ce.Code)
		assert.Equal(t, want, ce.Func, "the error names the call that failed")
		assert.Contains(t, err.Error(), want+"(device 1) returned CUDA_ERROR_ILLEGAL_ADDRESS (700)")
		return
	}
	require.NoError(t, b.Synchronize(0))
	require.NoError(t, b.WithContext(1, func() error {
		// On WithContext's locked thread, with device 1 current,
		// Synchronize(0) waits for device 0.
		require.NoError(t, b.Synchronize(0))
		if v2 {
			assert.Equal(t, 1, count(&current), want+" leaves the thread's current context as it was")
		} else {
			assert.Equal(t, 0, count(&current), "without "+want+"_v2 the context is made current first")
		}
		return nil
	}))
	if v2 {
		assert.Equal(t, 2, count(&syncs), "both waits named their context")
	} else {
		assert.Zero(t, count(&syncs))
	}
}
