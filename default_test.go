package flagshim

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/probe"
)

// subprocessEnv marks a re-executed test binary. Tests that touch the
// process-wide state (device.Default, probe.Default, the one Init) or the
// dynamic loader run their body in a child process of their own.
const subprocessEnv = "FLAGSHIM_TEST_SUBPROCESS"

// inSubprocess runs the test named name in a child process with env added
// and returns its combined output. In the child, it returns ("", true) and
// the caller runs the body.
func inSubprocess(t *testing.T, env ...string) (out string, child bool) {
	t.Helper()
	if os.Getenv(subprocessEnv) == t.Name() {
		return "", true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, subprocessEnv+"="+t.Name())...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "child process failed:\n%s", b)
	require.Contains(t, string(b), "--- PASS: "+t.Name(), "the child ran the test")
	return string(b), false
}

// The first device.Parse on device.Default runs Init: the answer for cuda
// comes only after the alias has been decided.
func TestDefaultRegistryInitialisesOnFirstParse(t *testing.T) {
	if _, child := inSubprocess(t, alias.EnvVar+"="); !child {
		return
	}
	assert.Empty(t, probe.Default.Names(), "linking flagshim probes nothing")
	assert.Equal(t, []device.Type{device.CPU}, device.Default.Types(), "linking flagshim registers nothing")

	_, err := device.Parse("cpu:0")
	require.NoError(t, err)
	rep, err := Init(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, rep.Phases, "Parse ran Init")
	assert.Equal(t, PhaseDrivers, rep.Phases[0].Phase)
	assert.Equal(t, device.CUDA, rep.Alias.From, "the alias was decided")
	assert.NotEmpty(t, rep.Alias.Reason)

	err = AddStep(PhaseVendorCompat, "late", func(context.Context) error { return nil })
	require.ErrorIs(t, err, ErrInitDone)
}
