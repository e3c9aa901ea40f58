package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flagos-ai/flagshim/drivers/musa"
	"github.com/flagos-ai/flagshim/vendors/vendorstest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/report"
	"github.com/flagos-ai/flagshim/vendors"
)

// Flag errors name each flag as the user typed it.
func TestSpelled(t *testing.T) {
	for _, tt := range []struct {
		args      []string
		msg, want string
	}{
		{[]string{"--json"}, "flag provided but not defined: -json", "flag provided but not defined: --json"},
		{[]string{"-json"}, "flag provided but not defined: -json", "flag provided but not defined: -json"},
		{[]string{"--probe=x", "--yaml=1"}, "flag provided but not defined: -yaml", "flag provided but not defined: --yaml"},
		{[]string{"--probe"}, "flag needs an argument: -probe", "flag needs an argument: --probe"},
		{[]string{"--L=maybe"}, `invalid boolean value "maybe" for -L: parse error`, `invalid boolean value "maybe" for --L: parse error`},
		{[]string{"--", "--json"}, "flag provided but not defined: -json", "flag provided but not defined: -json"},
		{[]string{"--js"}, "flag provided but not defined: -json", "flag provided but not defined: -json"},
	} {
		assert.Equal(t, tt.want, spelled(tt.msg, tt.args), "%q", tt.args)
	}
	code, _, errOut := runCLI("list", "--yaml")
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(errOut, "flagshim: list: flag provided but not defined: --yaml\n"), errOut)
	code, _, errOut = runCLI("--nosuch", "list")
	assert.Equal(t, exitUsage, code)
	assert.True(t, strings.HasPrefix(errOut, "flagshim: flag provided but not defined: --nosuch\n"), errOut)
}

// A bad setting's message starts at the variable: no step, no package, the
// "flagshim: " prefix once.
func TestSettingMessage(t *testing.T) {
	for in, want := range map[string]string{
		`ecosystem/alias: flagshim: invalid setting: flagos: no backend to route to: FLAGOS_BACKEND="nope" names no registered backend; accepted values: auto, cuda`: `invalid setting: FLAGOS_BACKEND="nope" names no registered backend; accepted values: auto, cuda`,
		`flagshim: invalid setting: alias: invalid FLAGOS_ALIAS_CUDA="maybe": accepted values are 1`:                                                                 `invalid setting: FLAGOS_ALIAS_CUDA="maybe": accepted values are 1`,
		`flagshim: invalid setting: FLAGOS_LOG="x": invalid log level`:                                                                                               `invalid setting: FLAGOS_LOG="x": invalid log level`,
		`drivers/acme: flagshim: invalid setting: ACME_DEVICES="lots": want a number`:                                                                                `invalid setting: ACME_DEVICES="lots": want a number`,
		`flagshim: invalid setting: MY_FLAGOS_LOG="x"`:                                                                                                               `invalid setting: MY_FLAGOS_LOG="x"`,
	} {
		assert.Equal(t, want, settingMessage(in), in)
	}
	inner := fmt.Errorf("%w: %w", flagshim.ErrBadSetting, errors.New(`flagos: FLAGOS_BACKEND="nope"`))
	e := settingError{Err: fmt.Errorf("ecosystem/alias: %w", inner)}
	assert.ErrorIs(t, e, flagshim.ErrBadSetting)
}

// FLAGOS_BACKEND naming no backend: one line, the prefix once, the variable
// and the accepted values; no step name.
func TestBadBackendMessage(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), "FLAGOS_BACKEND=nope", "FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1",
			"FLAGOS_LIBMUSA_PATH=/nonexistent/libmusa.so.1", "FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6")
		return
	}
	for _, args := range [][]string{{}, {"list"}, {"resolve", "cuda"}, {"explain"}} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, exitError, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, "flagshim: invalid setting: FLAGOS_BACKEND=\"nope\" names no registered backend; accepted values: auto, "+strings.Join(backendNames(), ", ")+"\n", errOut, args)
	}
}

// --probe before the command chooses the tier as after it, and explain (and
// the JSON's probe_source) says who chose it.
func TestProbeBeforeTheCommand(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name())
		return
	}
	code, out, errOut := runCLI("--probe", "presence", "explain")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "  The vendor backends' probes were answered by the presence tier (management libraries and device nodes; no driver initialized): --probe presence chose it.\n")
	assert.Contains(t, out, "one that crashes or exits takes this process with it. Where a vendor's management library is known to crash, choose the isolated tier",
		"explain says what the presence tier cannot contain, and which tier to choose")
	code, out, errOut = runCLI("--probe", "presence", "list")
	assert.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "cpu:0: "), out)
	code, out, _ = runCLI("--probe=presence", "info", "--json")
	require.Equal(t, exitOK, code)
	var s report.Info
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.Equal(t, "presence", string(s.Probe))
	assert.Equal(t, "--probe", s.ProbeSource)

	code, _, errOut = runCLI("--probe", "fast", "list")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `list: --probe "fast": want exact, presence or isolated`)
	code, _, errOut = runCLI("--probe", "exact", "version")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--probe applies to "+probingCommands()+", not to version")
	assert.Contains(t, probingCommands(), "info, list")
	assert.Contains(t, probingCommands(), "query")
}

func TestProbeChosenByTheEnvironment(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), "FLAGOS_PROBE=presence")
		return
	}
	code, out, errOut := runCLI("explain")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `answered by the presence tier (management libraries and device nodes; no driver initialized): FLAGOS_PROBE="presence" chose it.`)
	code, out, _ = runCLI("explain", "--json")
	require.Equal(t, exitOK, code)
	var s report.Info
	require.NoError(t, json.Unmarshal([]byte(out), &s))
	assert.Equal(t, "FLAGOS_PROBE", s.ProbeSource)
}

// TestMain's environment sets no tier: the CLI's default answered.
func TestProbeByDefault(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name())
		return
	}
	code, out, errOut := runCLI("explain")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "answered by the isolated tier (each driver initialized in a child process; none here): it is this command's default (--probe or FLAGOS_PROBE chooses another).")
}

// list --accelerators-only on a machine with accelerators: the vendor
// devices only (wc -l counts them), exit 0.
func TestListAcceleratorsOnly(t *testing.T) {
	if !dltest.IsChild(t) {
		lib := vendorstest.Driver(t, musa.Vendor(), dltest.PrivateDir(t))
		dltest.MustChild(t, t.Name(), "FLAGOS_LIBCUDA_PATH=/nonexistent/libcuda.so.1", "FLAGOS_LIBMUSA_PATH="+lib,
			"FLAGOS_LIBHIP_PATH=/nonexistent/libamdhip64.so.6")
		return
	}
	code, out, errOut := runCLI("list", "--accelerators-only")
	assert.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	assert.Equal(t, "musa:0: Fake GPU 0 (UUID: 10111213-1415-1617-1819-1a1b1c1d1e1f)\nmusa:1: Fake GPU 1 (UUID: 20212223-2425-2627-2829-2a2b2c2d2e2f)\n", out)
	code, out, _ = runCLI("list", "--json", "--accelerators-only")
	require.Equal(t, exitOK, code)
	var l listOutput
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Devices, 2)
	require.NotNil(t, l.Devices[1].Record, "--json carries each vendor device's record")
	assert.Equal(t, "musa:1", l.Devices[1].Record.Device)
	l.Devices[1].Record = nil
	assert.Equal(t, listed{Device: "musa:1", Type: "musa", Index: 1, Name: "Fake GPU 1", UUID: "20212223-2425-2627-2829-2a2b2c2d2e2f"}, l.Devices[1])
	code, out, _ = runCLI("list", "--json")
	require.Equal(t, exitOK, code)
	l = listOutput{}
	require.NoError(t, json.Unmarshal([]byte(out), &l))
	require.Len(t, l.Devices, 5)
	require.NotNil(t, l.Devices[3].Record, "a flagos device carries the record of the device it routes to")
	assert.Equal(t, "musa:0", l.Devices[3].Record.Device)
	assert.Nil(t, l.Devices[0].Record, "cpu:0 has none")
	l.Devices[3].Record = nil
	assert.Equal(t, listed{Device: "flagos:0", Type: "flagos", Index: 0, Name: "Fake GPU 0", UUID: "10111213-1415-1617-1819-1a1b1c1d1e1f", RoutesTo: "musa:0"}, l.Devices[3])
}

// Without an accelerator, --accelerators-only prints nothing and exits 6,
// as nvidia-smi -L does without a GPU.
func TestListAcceleratorsOnlyWithoutAccelerator(t *testing.T) {
	code, out, errOut := runCLI("list", "--accelerators-only")
	assert.Equal(t, exitNoDevice, code)
	assert.Equal(t, 6, code)
	assert.Empty(t, out)
	assert.Equal(t, "flagshim: no accelerator found (`flagshim explain` says what was tried)\n", errOut)
}

// backendNames are the built-in vendors' device types, sorted: the
// backends FLAGOS_BACKEND may name besides auto.
func backendNames() []string {
	var names []string
	for _, v := range vendors.All() {
		names = append(names, string(v.Type))
	}
	slices.Sort(names)
	return names
}
