package isolated

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/tier"
)

// hostileEnv makes the test binary, started as a probe child, break the
// protocol in the way it names instead of serving (see hostile).
const hostileEnv = "ISOLATE_TEST_HOSTILE"

// notChildEnv makes the test binary check, as a would-be child, that Serve
// returns (see TestServeIgnores).
const notChildEnv = "ISOLATE_TEST_NOT_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(hostileEnv); mode != "" && os.Getenv(EnvVar) != "" {
		hostile(mode)
	}
	if os.Getenv(notChildEnv) != "" {
		Serve() // must return: this process was not started by a supervisor
		_, still := os.LookupEnv(EnvVar)
		fmt.Printf("served-returned unset=%v\n", !still)
		os.Exit(0)
	}
	Serve()
	os.Exit(m.Run())
}

// hostile is a probe child that breaks the protocol; it never returns.
func hostile(mode string) {
	out := os.NewFile(answerFD, "answer")
	switch mode {
	case "close-and-hang": // closes its answer, then hangs
		out.Close()
		time.Sleep(time.Hour)
	case "long-line": // a line past MaxLine that it is still writing
		chunk := strings.Repeat("x", 1<<20)
		fmt.Fprint(out, "facts ")
		for range 64 {
			if _, err := fmt.Fprint(out, chunk); err != nil {
				os.Exit(9) // the pipe was closed under it: the supervisor gave up reading
			}
		}
		time.Sleep(time.Hour)
	case "forged": // facts no driver could give
		f := tier.Facts{Result: probe.Result{Available: true, Devices: -5, Reason: "forged"}}
		b, _ := json.Marshal(f)
		fmt.Fprintf(out, "step cuInit\nfacts %s\n", b)
		os.Exit(0)
	case "too-many": // more devices than any machine
		f := tier.Facts{Result: probe.Result{Available: true, Devices: device.MaxDevices + 1}}
		f.Devices = make([]device.Properties, device.MaxDevices+1)
		b, _ := json.Marshal(f)
		fmt.Fprintf(out, "facts %s\n", b)
		os.Exit(0)
	case "garbage":
		fmt.Fprint(out, "hello supervisor\n")
		time.Sleep(time.Hour)
	case "trace-garbage": // a trace line that is not JSON
		fmt.Fprint(out, "step cuInit\ntrace {nope\n")
		time.Sleep(time.Hour)
	case "crash-with-helper": // a helper keeps the pipes; then a crash
		helper := exec.Command("sleep", "30")
		helper.ExtraFiles = []*os.File{out}
		helper.Stderr = os.Stderr
		if err := helper.Start(); err != nil {
			os.Exit(7)
		}
		fmt.Fprint(out, "step cuInit\n")
		_ = syscall.Kill(os.Getpid(), syscall.SIGSEGV)
		time.Sleep(time.Hour)
	case "crash-report": // what the Go runtime does when C code aborts
		fmt.Fprint(out, "step cuInit\n")
		fmt.Fprint(os.Stderr, "SIGABRT: abort\nPC=0x0 m=0 sigcode=18446744073709551610\n")
		os.Exit(2)
	case "answer-then-exit": // a whole answer the pipe holds (under 64 KiB), then the exit
		f := tier.Facts{Result: probe.Result{Available: true, Devices: 100, Reason: "whole"}}
		f.Devices = make([]device.Properties, 100)
		for i := range f.Devices {
			f.Devices[i].Name = strings.Repeat("n", 100)
		}
		b, _ := json.Marshal(f)
		fmt.Fprintf(out, "step cuDeviceGetCount\nfacts %s\n", b)
		os.Exit(0)
	case "exit-quietly":
		fmt.Fprint(out, "step cuDeviceGetCount\n")
		fmt.Fprintln(os.Stderr, "something went wrong")
		os.Exit(3)
	}
	os.Exit(8)
}

// probeOnce runs one child of vendor t under cfg and returns its answer
// and the supervisor's start errors.
func probeOnce(t *testing.T, cfg Config, typ device.Type) (tier.Facts, error) {
	t.Helper()
	s := New(cfg)
	f := s.Facts(typ, nil)(nil)
	return f, s.Err()
}

func TestHostileChildren(t *testing.T) {
	tests := []struct {
		mode    string
		timeout time.Duration
		check   func(t *testing.T, f tier.Facts)
	}{
		{"close-and-hang", 500 * time.Millisecond, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "closed its answer without one and did not exit within 500ms")
		}},
		{"long-line", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "broke its protocol")
			assert.Contains(t, f.Result.Reason, fmt.Sprintf("a line longer than %d bytes", MaxLine))
		}},
		{"forged", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "broke its protocol in cuInit: its facts are impossible: a device count of -5")
		}},
		{"too-many", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "its facts are impossible")
			assert.Contains(t, f.Result.Reason, "4096")
		}},
		{"garbage", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, `an unknown line "hello supervisor"`)
		}},
		{"trace-garbage", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "broke its protocol in cuInit")
			assert.Contains(t, f.Result.Reason, "a trace line, and no trace was asked")
		}},
		{"crash-with-helper", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "the driver crashed in cuInit (signal 11: segmentation fault)")
			assert.NotContains(t, f.Result.Reason, "FLAGOS_PROBE_TIMEOUT", "a crash is reported as a crash, not as a timeout")
		}},
		{"exit-quietly", 30 * time.Second, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "exited with status 3 in cuDeviceGetCount without an answer; it printed: something went wrong")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			t.Setenv(hostileEnv, tc.mode)
			f, err := probeOnce(t, Config{Timeout: tc.timeout}, "cuda")
			require.NoError(t, err, "the child started")
			assert.False(t, f.Result.Available)
			assert.Zero(t, f.Result.Devices)
			assert.Equal(t, tier.Isolated, f.Tier)
			tc.check(t, f)
			assert.Zero(t, Wait(10*time.Second), "the child was killed and reaped")
		})
	}
}

// An exited child's pipes are read to their end however late their
// readers run (drain.go). The stall stands for a loaded machine; before
// the rule, a fixed grace after the exit took a crash for a plain exit
// and a whole answer for none, on a loaded CI machine only.
func TestExitedChildIsReadWhole(t *testing.T) {
	tests := []struct {
		mode          string
		answer, errst time.Duration
		check         func(t *testing.T, f tier.Facts)
	}{
		{"crash-report", 0, 0, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "the driver crashed in cuInit (signal 6: aborted)")
		}},
		{"crash-report", 0, 400 * time.Millisecond, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "the driver crashed in cuInit (signal 6: aborted)")
		}},
		{"crash-report", 400 * time.Millisecond, 400 * time.Millisecond, func(t *testing.T, f tier.Facts) {
			assert.Contains(t, f.Result.Reason, "the driver crashed in cuInit (signal 6: aborted)", "the step line was read too")
		}},
		{"answer-then-exit", 0, 0, func(t *testing.T, f tier.Facts) {
			assert.True(t, f.Result.Available, f.Result.Reason)
			assert.Len(t, f.Devices, 100)
		}},
		{"answer-then-exit", 400 * time.Millisecond, 0, func(t *testing.T, f tier.Facts) {
			assert.True(t, f.Result.Available, f.Result.Reason)
			assert.Len(t, f.Devices, 100)
		}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s/answer_%v/stderr_%v", tc.mode, tc.answer, tc.errst), func(t *testing.T) {
			t.Setenv(hostileEnv, tc.mode)
			stall.answer, stall.stderr = tc.answer, tc.errst
			t.Cleanup(func() { stall.answer, stall.stderr = 0, 0 })
			f, err := probeOnce(t, Config{Timeout: 30 * time.Second}, "cuda")
			require.NoError(t, err, "the child started")
			tc.check(t, f)
		})
	}
}

func TestTimeoutIsReportedAsSuch(t *testing.T) {
	t.Setenv(hostileEnv, "close-and-hang")
	s := New(Config{Timeout: 300 * time.Millisecond})
	_, err := s.run("cuda")
	assert.ErrorIs(t, err, driver.ErrTimedOut)
	assert.NotErrorIs(t, err, ErrProtocol)
	t.Setenv(hostileEnv, "forged")
	_, err = s.run("cuda")
	assert.ErrorIs(t, err, ErrProtocol)
}

// A vendor given to Facts after the first probe started still gets its
// child: before the fix its answer was never sent and the ask blocked.
func TestLateVendor(t *testing.T) {
	s := New(Config{Timeout: 20 * time.Second})
	first := s.Facts("first", nil)
	f := first(nil)
	assert.False(t, f.Result.Available, "no such vendor")
	assert.Contains(t, f.Result.Reason, "exited with status 2", "the child knows no vendor \"first\"")
	late := s.Facts("late", nil)
	done := make(chan tier.Facts, 1)
	go func() { done <- late(nil) }()
	select {
	case f := <-done:
		assert.False(t, f.Result.Available)
		assert.NotEmpty(t, f.Result.Reason)
	case <-time.After(2 * time.Minute):
		t.Fatal("the late vendor's child never started: its ask blocks forever")
	}
}

func TestChildCannotStart(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "flagshim-gone")
	f, err := probeOnce(t, Config{Exe: missing}, "cuda")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrStart)
	assert.Contains(t, err.Error(), missing, "the error names the binary")
	assert.Contains(t, f.Result.Reason, missing)
	assert.False(t, f.Result.Available)
}

// The binary deleted from disk after the program started: the child is
// started from /proc/self/exe, the program that is running, so the probe
// still answers.
func TestDeletedBinaryStillServes(t *testing.T) {
	if os.Getenv("ISOLATE_TEST_DELETED") != "" {
		require.NoError(t, os.Remove(os.Getenv("ISOLATE_TEST_DELETED")))
		f, err := probeOnce(t, Config{Timeout: 20 * time.Second}, "nosuchvendor")
		require.NoError(t, err, "the child started although the file is gone")
		assert.Contains(t, f.Result.Reason, "exited with status 2", "it answered: the vendor is unknown")
		assert.Contains(t, f.Result.Reason, `unknown vendor "nosuchvendor"`)
		return
	}
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		t.Skipf("no /proc/self/exe here (%v): the deleted-binary case needs it", err)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "isolate.test")
	in, err := os.Open(self)
	require.NoError(t, err)
	out, err := os.OpenFile(copyPath, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	in.Close()
	require.NoError(t, out.Close())
	cmd := exec.Command(copyPath, "-test.run=^TestDeletedBinaryStillServes$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ISOLATE_TEST_DELETED="+copyPath)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	assert.Contains(t, string(b), "PASS")
}

// FLAGSHIM_PROBE_CHILD alone, as a host may inherit it, makes nothing a
// child: Serve returns, and removes it.
func TestServeIgnores(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	run := func(t *testing.T, extra []*os.File, env ...string) string {
		cmd := exec.Command(self, "-test.run=^$")
		cmd.Env = append(append(os.Environ(), notChildEnv+"=1"), env...)
		cmd.ExtraFiles = extra
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		return string(b)
	}
	t.Run("variable alone", func(t *testing.T) {
		assert.Contains(t, run(t, nil, EnvVar+"=1234:cuda"), "served-returned unset=true")
	})
	t.Run("pipes with the wrong token", func(t *testing.T) {
		ansR, ansW, err := os.Pipe()
		require.NoError(t, err)
		defer ansR.Close()
		reqR, reqW, err := os.Pipe()
		require.NoError(t, err)
		fmt.Fprintf(reqW, "notthetoken cuda\n")
		reqW.Close()
		out := run(t, []*os.File{ansW, reqR}, EnvVar+"=thetoken")
		ansW.Close()
		reqR.Close()
		assert.Contains(t, out, "served-returned unset=true")
	})
	t.Run("not pipes", func(t *testing.T) {
		f1, err := os.CreateTemp(t.TempDir(), "fd3")
		require.NoError(t, err)
		f2, err := os.CreateTemp(t.TempDir(), "fd4")
		require.NoError(t, err)
		fmt.Fprintf(f2, "thetoken cuda\n")
		_, _ = f2.Seek(0, 0)
		assert.Contains(t, run(t, []*os.File{f1, f2}, EnvVar+"=thetoken"), "served-returned unset=true", "regular files are not a supervisor's pipes")
	})
}

func TestNoChildService(t *testing.T) {
	served.Store(false)
	t.Cleanup(func() { served.Store(true) })
	f, err := probeOnce(t, Config{}, "cuda")
	assert.ErrorIs(t, err, ErrNoChildService)
	assert.ErrorIs(t, err, ErrStart)
	assert.Contains(t, f.Result.Reason, "flagshim.ServeProbeChild")
}

// A vendor whose answer the parent knows without running driver code
// (dry) gets no child; one whose dry answer declines gets its child.
func TestDryAnswerStartsNoChild(t *testing.T) {
	t.Setenv(hostileEnv, "exit-quietly") // what a child would answer, were one started
	s := New(Config{Timeout: 30 * time.Second})
	known := tier.Facts{Tier: tier.Exact, Result: probe.Result{Reason: "cuda: libcuda not found"}}
	asked := 0
	here := s.Facts("cuda", func() (tier.Facts, bool) { asked++; return known, true })
	declined := s.Facts("musa", func() (tier.Facts, bool) { return tier.Facts{}, false })

	f := here(nil)
	assert.Equal(t, 1, asked)
	assert.Equal(t, "cuda: libcuda not found", f.Result.Reason, "dry's answer, not a child's")
	assert.Equal(t, tier.Isolated, f.Tier)
	assert.Contains(t, f.Extra["isolated.child"], "none")
	assert.NotContains(t, f.Extra, "isolated.duration")

	g := declined(nil)
	assert.Contains(t, g.Result.Reason, "exited with status 3", "musa's answer came from its child")
	assert.Contains(t, g.Extra, "isolated.duration")
	assert.Equal(t, 1, asked, "each vendor is probed once")
	assert.Zero(t, Wait(10*time.Second))
}
