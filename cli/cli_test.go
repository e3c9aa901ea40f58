package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/probe"
)

// TestMain makes the in-process Init the same on every machine: no variable
// of the host, and driver libraries that do not exist, so no accelerator.
// A child of dltest.RunChild keeps the environment its parent gave it.
func TestMain(m *testing.M) {
	flagshim.ServeProbeChild()
	if os.Getenv(dltest.ChildEnv) == "" {
		for _, v := range envNames() {
			os.Unsetenv(v)
		}
		os.Setenv("FLAGOS_LIBCUDA_PATH", "/nonexistent/libcuda.so.1")
		os.Setenv("FLAGOS_LIBMUSA_PATH", "/nonexistent/libmusa.so.1")
	}
	os.Exit(m.Run())
}

// newChild is the test binary running only the tests that run selects, in
// this process's environment (TestMain's).
func newChild(t *testing.T, exe, run string) *exec.Cmd {
	cmd := exec.Command(exe, run, "-test.count=1")
	cmd.Env = os.Environ()
	cmd.Dir = t.TempDir()
	return cmd
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelpForms(t *testing.T) {
	tests := []struct {
		args []string
		want string // the usage's first line
	}{
		{[]string{"-h"}, "usage: flagshim [-v] [--json] [--probe TIER] [command] [arguments]"},
		{[]string{"-help"}, "usage: flagshim [-v] [--json] [--probe TIER] [command] [arguments]"},
		{[]string{"--help"}, "usage: flagshim [-v] [--json] [--probe TIER] [command] [arguments]"},
		{[]string{"help"}, "usage: flagshim [-v] [--json] [--probe TIER] [command] [arguments]"},
		{[]string{"-v", "--help"}, "usage: flagshim [-v] [--json] [--probe TIER] [command] [arguments]"},
		{[]string{"help", "info"}, "usage: flagshim [-v] info [--json | -L] [--probe TIER]"},
		{[]string{"info", "-h"}, "usage: flagshim [-v] info [--json | -L] [--probe TIER]"},
		{[]string{"info", "--json", "--help"}, "usage: flagshim [-v] info [--json | -L] [--probe TIER]"},
		{[]string{"resolve", "--help"}, "usage: flagshim [-v] resolve [--json] [--probe TIER] DEVICE..."},
		{[]string{"resolve", "cuda:0", "-h"}, "usage: flagshim [-v] resolve [--json] [--probe TIER] DEVICE..."},
		{[]string{"help", "resolve"}, "usage: flagshim [-v] resolve [--json] [--probe TIER] DEVICE..."},
		{[]string{"list", "-h"}, "usage: flagshim [-v] list [--accelerators-only] [--json] [--probe TIER]"},
		{[]string{"explain", "--help"}, "usage: flagshim [-v] explain [--json] [--probe TIER]"},
		{[]string{"version", "-h"}, "usage: flagshim [-v] version [--json]"},
		{[]string{"help", "help"}, "usage: flagshim [-v] help [COMMAND]"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(tt.args...)
			assert.Equal(t, exitOK, code)
			assert.Equal(t, tt.want, strings.SplitN(out, "\n", 2)[0])
			assert.Contains(t, out, "Exit status: 0 on success")
			assert.Empty(t, errOut)
		})
	}
}

// Every command has its own usage, and the top usage lists each one.
func TestEveryCommandIsListed(t *testing.T) {
	top := topUsage()
	for _, c := range commands {
		assert.Contains(t, top, "\n  "+c.shortSynopsis()+" ", c.name)
		assert.True(t, strings.HasPrefix(c.usage(), "usage: flagshim [-v] "+c.synopsis()+"\n\n"), c.name)
		assert.NotEmpty(t, c.summary)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
		cmd  string // the command whose usage the error points to; "" the top one
	}{
		{[]string{"bogus"}, `flagshim: unknown command "bogus"`, ""},
		{[]string{"-nosuchflag"}, "flagshim: flag provided but not defined: -nosuchflag", ""},
		{[]string{"info", "--yaml"}, "flagshim: info: flag provided but not defined: --yaml", "info"},
		{[]string{"info", "extra"}, `flagshim: info takes no arguments, got ["extra"]`, "info"},
		{[]string{"info", "-L", "--json"}, "flagshim: info: -L and --json cannot be combined", "info"},
		{[]string{"resolve"}, "flagshim: resolve needs at least one device string, e.g. flagshim resolve cuda:0", "resolve"},
		{[]string{"list", "x"}, `flagshim: list takes no arguments, got ["x"]`, "list"},
		{[]string{"explain", "x"}, `flagshim: explain takes no arguments, got ["x"]`, "explain"},
		{[]string{"info", "--probe", "fast"}, `flagshim: info: --probe "fast": want exact, presence or isolated`, "info"},
		{[]string{"list", "--probe"}, "flagshim: list: flag needs an argument: --probe", "list"},
		{[]string{"version", "x"}, `flagshim: version takes no arguments, got ["x"]`, "version"},
		{[]string{"--version", "info"}, `flagshim: --version takes no command, got ["info"]`, ""},
		{[]string{"help", "bogus"}, `flagshim: help: unknown command "bogus"`, ""},
		{[]string{"help", "a", "b"}, `flagshim: help takes at most one command, got ["a" "b"]`, "help"},
		{[]string{"--probe", "exact", "version"}, "flagshim: --probe applies to " + probingCommands() + ", not to version", "version"},
		{[]string{"version", "--probe", "exact"}, "flagshim: --probe applies to " + probingCommands() + ", not to version", "version"},
		{[]string{"--json", "help"}, "flagshim: help has no JSON output (--json)", "help"},
		{[]string{"help", "--json", "list"}, "flagshim: help has no JSON output (--json)", "help"},
		{[]string{"list", "--probe", "fast\x1b[2J"}, `flagshim: list: --probe "fast\x1b[2J": want exact, presence or isolated`, "list"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(tt.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, out, "usage errors print nothing on stdout")
			help := "flagshim -h"
			if tt.cmd != "" {
				help = "flagshim " + tt.cmd + " -h"
			}
			assert.Equal(t, tt.msg+"\nrun '"+help+"' for the usage\n", errOut, "one line, and where the usage is")
		})
	}
}

func TestWantsHelp(t *testing.T) {
	assert.True(t, wantsHelp([]string{"a", "-h"}))
	assert.True(t, wantsHelp([]string{"--help"}))
	assert.True(t, wantsHelp([]string{"-help", "--"}))
	assert.False(t, wantsHelp([]string{"--", "-h"}))
	assert.False(t, wantsHelp([]string{"-hh", "h", "help"}))
	assert.False(t, wantsHelp(nil))
}

func TestPrintErrPrefixOnce(t *testing.T) {
	tests := []struct{ err, want string }{
		{"boom", "flagshim: boom\n"},
		{"flagshim: boom", "flagshim: boom\n"},
		{"flagshim: flagshim: boom", "flagshim: boom\n"},
		{"flagshim: a\nb\n\nflagshim: c", "flagshim: a\nflagshim: b\nflagshim: c\n"},
		{"device: invalid device string \"x\"", "flagshim: device: invalid device string \"x\"\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		printErr(&b, errors.New(tt.err))
		assert.Equal(t, tt.want, b.String(), tt.err)
	}
}

func TestCheckSettings(t *testing.T) {
	env := func(kv map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
	}
	require.NoError(t, checkSettings(env(nil)))
	require.NoError(t, checkSettings(env(map[string]string{"FLAGOS_LOG": " DEBUG ", "FLAGOS_ALIAS_CUDA": "Off"})))

	err := checkSettings(env(map[string]string{"FLAGOS_LOG": "loud"}))
	require.ErrorIs(t, err, flagshim.ErrBadSetting)
	assert.Equal(t, `flagshim: invalid setting: FLAGOS_LOG="loud": invalid log level; accepted values: off (default), error, warn, info, debug`, err.Error())

	err = checkSettings(env(map[string]string{"FLAGOS_LOG": "loud", "FLAGOS_ALIAS_CUDA": "maybe"}))
	require.ErrorIs(t, err, flagshim.ErrBadSetting)
	assert.Len(t, badSettings(err), 2, "each bad variable is its own error")
	assert.Contains(t, err.Error(), `FLAGOS_ALIAS_CUDA="maybe"`)
}

func TestBadSettings(t *testing.T) {
	bad1 := fmt.Errorf("%w: FLAGOS_PROBE=%q: want exact, presence or isolated", flagshim.ErrBadSetting, "fast")
	bad2 := fmt.Errorf("drivers/cuda: %w", fmt.Errorf("%w: FLAGOS_LIBCUDA_PATH=%q is relative", flagshim.ErrBadSetting, "lib"))
	other := errors.New("drivers/acme: ACME_DEVICES=\"lots\"")
	// One error that wraps two with %w: kept whole, not split in parts.
	both := fmt.Errorf("%w: %w", flagshim.ErrBadSetting, errors.New("FLAGOS_LOG=\"x\""))

	assert.Nil(t, badSettings(nil))
	assert.Nil(t, badSettings(other))
	assert.Nil(t, badSettings(errors.Join(other, errors.New("x"))))
	assert.Equal(t, []error{bad1}, badSettings(bad1))
	assert.Equal(t, []error{bad1, bad2}, badSettings(errors.Join(other, bad1, nil, errors.Join(bad2, other))))
	assert.Equal(t, []error{both}, badSettings(both))
	wrapped := fmt.Errorf("flagshim: %w", errors.Join(bad1, other))
	assert.Equal(t, []error{wrapped}, badSettings(wrapped), "a join wrapped in one message is one error")
}

// fakeInit replaces flagshim.Init for one test.
func fakeInit(t *testing.T, rep *flagshim.Report, err error) {
	t.Helper()
	prev := initFlagshim
	initFlagshim = func(context.Context, ...flagshim.Option) (*flagshim.Report, error) { return rep, err }
	t.Cleanup(func() { initFlagshim = prev })
}

// A bad setting that Init reports (flagshim.ErrBadSetting) is an error of
// every command, which prints only the bad settings, not the unrelated
// failures joined with them, and nothing on stdout.
func TestBadSettingFromInitFailsEveryCommand(t *testing.T) {
	bad := fmt.Errorf("%w: FLAGOS_PROBE=%q: accepted values: exact, presence, isolated", flagshim.ErrBadSetting, "fast")
	other := errors.New("drivers/acme: ACME_DEVICES=\"lots\"")
	fakeInit(t, &flagshim.Report{}, errors.Join(other, bad))
	for _, args := range [][]string{{"info"}, {"info", "--json"}, {"info", "-L"}, {"list"}, {"resolve", "cpu"}, {"explain"}} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, exitError, code, args)
		assert.Empty(t, out, args)
		assert.Equal(t, "flagshim: invalid setting: FLAGOS_PROBE=\"fast\": accepted values: exact, presence, isolated\n", errOut, args)
	}
}

// Other errors of Init are shown by info and explain (after their report,
// exit 1) and are not errors of resolve and list.
func TestOtherInitErrors(t *testing.T) {
	boom := errors.New("drivers/acme: ACME_DEVICES=\"lots\"")
	fakeInit(t, &flagshim.Report{}, boom)
	for _, args := range [][]string{{"info"}, {"info", "--json"}, {"explain"}} {
		code, out, errOut := runCLI(args...)
		assert.Equal(t, exitError, code, args)
		assert.NotEmpty(t, out, "%v: the report is printed", args)
		assert.Equal(t, "flagshim: drivers/acme: ACME_DEVICES=\"lots\"\n", errOut, args)
	}
	code, out, errOut := runCLI("resolve", "cpu:0")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "cpu:0\n", out)
	assert.Empty(t, errOut)
	code, out, _ = runCLI("list")
	assert.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "cpu:0: host cpu ("), out)

	// A nil report: nothing to show.
	fakeInit(t, nil, boom)
	code, out, errOut = runCLI("info")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Equal(t, "flagshim: drivers/acme: ACME_DEVICES=\"lots\"\n", errOut)
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// Output that cannot be written is an error of every command, said once.
func TestUnwritableOutput(t *testing.T) {
	for _, args := range [][]string{
		{"version"}, {"--version"}, {"help"}, {"-h"}, {"info", "-h"}, {"help", "list"},
		{"resolve", "cpu", "cpu:0"}, {"list"}, {"info", "-L"}, {"info"}, {"info", "--json"}, {"explain"},
	} {
		var errOut bytes.Buffer
		code := Run(args, failWriter{}, &errOut)
		assert.Equal(t, exitError, code, args)
		// list may say "no accelerator found" first.
		assert.True(t, strings.HasSuffix(errOut.String(), "\nflagshim: cannot write the output: no space left on device\n") ||
			errOut.String() == "flagshim: cannot write the output: no space left on device\n", "%v: %q", args, errOut.String())
		assert.Equal(t, 1, strings.Count(errOut.String(), "cannot write"), args)
	}
}

// shortWriter writes less than asked without an error, which io.Writer
// forbids; the CLI counts it as a failed write.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return len(p) / 2, nil }

func TestShortWriteIsAnError(t *testing.T) {
	var errOut bytes.Buffer
	assert.Equal(t, exitError, Run([]string{"version"}, shortWriter{}, &errOut))
	assert.Equal(t, "flagshim: cannot write the output: short write\n", errOut.String())
}

// stdout on /dev/full, in a process of its own: the real write error.
func TestStdoutOnDevFull(t *testing.T) {
	if args := os.Getenv("FLAGSHIM_CLI_CHILD_ARGS"); args != "" {
		os.Exit(Run(strings.Fields(args), os.Stdout, os.Stderr))
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full on this system (%v): TestUnwritableOutput covers the same path with a failing writer", err)
	}
	defer full.Close()
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, args := range []string{"version", "help", "resolve cpu", "list", "info --json"} {
		t.Run(args, func(t *testing.T) {
			cmd := newChild(t, exe, "-test.run=^TestStdoutOnDevFull$")
			cmd.Env = append(cmd.Env, "FLAGSHIM_CLI_CHILD_ARGS="+args)
			cmd.Stdout = full
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			err := cmd.Run()
			require.Error(t, err, "exit status 1 expected")
			assert.Equal(t, exitError, cmd.ProcessState.ExitCode())
			last := strings.TrimSuffix(errOut.String(), "\n")
			last = last[strings.LastIndex(last, "\n")+1:]
			assert.Equal(t, "flagshim: cannot write the output: write /dev/stdout: no space left on device", last)
			assert.Equal(t, 1, strings.Count(errOut.String(), "cannot write"))
		})
	}
}

// version opens nothing: it runs no Init (checked in a process of its own,
// where nothing else ran Init first).
func TestVersionRunsNoInit(t *testing.T) {
	if !dltest.IsChild(t) {
		dltest.MustChild(t, t.Name(), "FLAGOS_LOG=loud")
		return
	}
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, Run([]string{"version"}, &out, &errOut), "a bad FLAGOS_LOG does not matter to version")
	require.Equal(t, exitOK, Run([]string{"--version"}, &out, &errOut))
	require.Equal(t, exitOK, Run([]string{"help"}, &out, &errOut))
	assert.Empty(t, errOut.String())
	assert.Empty(t, probe.Default.Names(), "no driver step ran")
	assert.Equal(t, 2*len(versionLine()), strings.Index(out.String(), "usage:"))
}

func TestListLine(t *testing.T) {
	tests := []struct {
		id       device.Device
		p        device.Properties
		routesTo device.Type
		want     string
	}{
		{device.Device{Type: "cpu", Index: 0}, device.Properties{Name: "host cpu (amd64)"}, "", "cpu:0: host cpu (amd64)"},
		{device.Device{Type: "cuda", Index: 0}, device.Properties{Name: "NVIDIA H200", UUID: "GPU-8a1f"}, "", "cuda:0: NVIDIA H200 (UUID: GPU-8a1f)"},
		{device.Device{Type: "flagos", Index: 1}, device.Properties{Name: "MTT S4000 (musa:1)", UUID: "2021"}, "musa", "flagos:1: MTT S4000 (UUID: 2021) -> musa:1"},
		{device.Device{Type: "flagos", Index: 1}, device.Properties{Name: "odd name"}, "acme", "flagos:1: odd name -> acme:1"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, listLine(listEntry(tt.id, tt.p, tt.routesTo)))
	}
}

// On a machine without an accelerator (TestMain's), list prints cpu:0 only
// and says so on stderr, with exit 0.
func TestListWithoutAccelerator(t *testing.T) {
	code, out, errOut := runCLI("list")
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, `\Acpu:0: host cpu \(\w+\)\n\z`, out)
	assert.Equal(t, "flagshim: no accelerator found (`flagshim explain` says what was tried)\n", errOut)
	code, out2, _ := runCLI("info", "-L")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, out, out2)
}

func TestResolve(t *testing.T) {
	code, out, errOut := runCLI("resolve", "cpu", "cpu:000", "CPU", "cpu:-1")
	assert.Equal(t, exitError, code)
	assert.Equal(t, "cpu\ncpu:0\n", out)
	assert.Contains(t, errOut, "flagshim: device: invalid device string \"CPU\"")
	assert.NotContains(t, errOut, "flagshim: flagshim:")
	assert.Equal(t, 2, strings.Count(errOut, "\n"), "one line per bad string")
}
