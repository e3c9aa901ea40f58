package flagshim_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// TestGoPlugin builds testdata/plugin/plug as a Go plugin and
// testdata/plugin/host as a program that imports flagshim and opens it, then
// checks that both share one registry and one Init: a plugin opened before
// the host's Init is honoured; one opened after it is refused with an error
// that says to open plugins before Init.
//
// Plugins need cgo, so both are built with CGO_ENABLED=1 whatever this test
// binary was built with (and with -race when it was); the test skips, saying
// why, only where plugins cannot be built.
func TestGoPlugin(t *testing.T) {
	pluginPlatform(t)
	t.Log("building a Go plugin and its host with go build (a few seconds: the linker; cached while the sources stay the same)")
	flags := []string{}
	if testBinaryRace() {
		flags = append(flags, "-race")
	}
	plug := dltest.GoBuild(t, "./testdata/plugin/plug", "plug.so", append(flags, "-buildmode=plugin")...)
	host := dltest.GoBuild(t, "./testdata/plugin/host", "host", flags...)

	t.Run("opened before Init: its backend is registered", func(t *testing.T) {
		res, stderr := runPluginHost(t, host, "before", plug)
		assert.Empty(t, stderr)
		assert.Empty(t, res.RegisterErr)
		assert.True(t, res.SameRegistry, "the plugin's device.Default is the host's")
		assert.Empty(t, res.InitErr)
		assert.Contains(t, res.Steps, "drivers/plug", "the plugin's step ran in the host's Init")
		assert.Contains(t, res.Types, "plug")
		assert.Empty(t, res.LookupErr)
		assert.Equal(t, 2, res.Devices)
		assert.Equal(t, pluginProbeResult{Available: true, Devices: 2, Reason: "2 devices from the plug plugin"}, res.Probe)
		assert.Equal(t, "plug:1", res.ParsedPlug1)
		assert.True(t, res.LateAddStepIsDone)
	})

	t.Run("opened after Init: refused, saying to open plugins before Init", func(t *testing.T) {
		res, stderr := runPluginHost(t, host, "after", plug)
		assert.Contains(t, stderr, "host: plugin refused: plug plugin: ")
		assert.Contains(t, res.RegisterErr, "before flagshim.Init")
		assert.True(t, res.RegisterErrIsDone, "the error wraps flagshim.ErrInitDone: %s", res.RegisterErr)
		assert.True(t, res.SameRegistry)
		assert.NotContains(t, res.Steps, "drivers/plug")
		assert.NotContains(t, res.Types, "plug")
		assert.Contains(t, res.LookupErr, `unknown device type "plug"`)
		assert.False(t, res.Probe.Available)
		assert.Empty(t, res.ParsedPlug1)
	})
}

type pluginProbeResult struct {
	Available bool
	Devices   int
	Reason    string
}

// pluginHostResult is what testdata/plugin/host prints.
type pluginHostResult struct {
	RegisterErr       string            `json:"register_err"`
	RegisterErrIsDone bool              `json:"register_err_is_init_done"`
	SameRegistry      bool              `json:"same_registry"`
	InitErr           string            `json:"init_err"`
	Steps             []string          `json:"steps"`
	Types             []string          `json:"types"`
	LookupErr         string            `json:"lookup_err"`
	Devices           int               `json:"devices"`
	Probe             pluginProbeResult `json:"probe"`
	ParsedPlug1       string            `json:"parsed_plug1"`
	LateAddStepIsDone bool              `json:"late_add_step_is_init_done"`
}

func runPluginHost(t *testing.T, host string, args ...string) (pluginHostResult, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(host, args...)
	// No vendor runtime, whatever the machine has.
	none := t.TempDir()
	cmd.Env = append(os.Environ(), "FLAGOS_ALIAS_CUDA=", "FLAGOS_BACKEND=", "FLAGOS_LOG=",
		"FLAGOS_LIBCUDA_PATH="+none+"/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+none+"/libmusa.so.1")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "host %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), &stdout, &stderr)
	var res pluginHostResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), stdout.String())
	return res, stderr.String()
}

// pluginPlatform skips the test where Go plugins cannot be built (dltest.GoBuild
// skips it, saying why, where there is no go command or no C compiler).
func pluginPlatform(t *testing.T) {
	t.Helper()
	switch runtime.GOOS {
	case "linux", "darwin", "freebsd":
	default:
		t.Skipf("Go plugins (-buildmode=plugin) are not supported on %s", runtime.GOOS)
	}
}

// testBinaryRace reports whether this test binary was built with -race: the
// host and plugin are built the same way.
func testBinaryRace() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}
