package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/flagos-ai/flagshim/tier"

	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// failure says why a call gave no answer; export.go maps it to the C codes
// of flagshim.h.
type failure int

const (
	failNone    failure = iota
	failInit            // FLAGSHIM_EINIT
	failArgs            // FLAGSHIM_EINVAL
	failDevice          // FLAGSHIM_EDEVICE
	failRange           // FLAGSHIM_ERANGE
	failHook            // FLAGSHIM_EHOOK
	failBackend         // FLAGSHIM_EBACKEND
	failNVSHMEM         // FLAGSHIM_ENVSHMEM
	failNoDev           // FLAGSHIM_ENODEV
	failSelect          // FLAGSHIM_ESELECT
)

// initHost runs flagshim.Init as a shared library inside another program
// needs it: the presence tier by default (no driver initialized in the
// host, which may fork: PyTorch's DataLoader, multiprocessing), and no
// isolated tier (the host is not a Go program that can re-execute itself).
// Every export calls it first; device.Default then finds Init done.
//
// The management libraries the presence tier reads (NVML, ...) are left
// initialized (flagshim.WithoutShutdown), as PyTorch's own fork-safe NVML
// count leaves NVML: nvmlShutdown was 2.9 ms of a C host's 21 ms first
// answer on an H100, time every host waits for at its start (issue 40).
// NVML is no driver context: a child forked afterwards inits its own
// (python/tests/gpu/fork_presence.py proves CUDA and NVML there), and a
// later query of the same library in this process ends the session first.
//
// Once Init has returned, initRan is set and onInit (fork.go's: it tells
// the C side that the runtime is up, so its fork handler need not wait for
// it) has run, once.
func initHost() (*flagshim.Report, error) {
	rep, err := flagshim.Init(context.Background(), flagshim.WithDefaultProbe(tier.Presence), flagshim.WithoutChildProcesses(), flagshim.WithoutShutdown())
	if !initRan.Load() && !initRan.Swap(true) && onInit != nil {
		onInit()
	}
	return rep, err
}

// initRan says Init has returned in this process; onInit runs once then.
var (
	initRan atomic.Bool
	onInit  func()
)

// resolve parses s on device.Default.
func resolve(s string) (string, failure) {
	initHost()
	d, err := device.Parse(s)
	switch {
	case err == nil:
		return d.String(), failNone
	case errors.Is(err, device.ErrSyntax), errors.Is(err, device.ErrUnknownType):
		setErr(err)
		return "", failDevice
	default: // device.Default could not be initialised: a bad setting or an undecided alias
		setInitErr(err)
		return "", failInit
	}
}

// aliasActive says whether cuda means flagos. Errors of other steps do not
// count: only what makes device.Default refuse is a failure.
func aliasActive() (bool, failure) {
	rep, _ := initHost()
	if _, err := device.Lookup(device.CPU); err != nil || rep == nil {
		if err != nil {
			setInitErr(err)
		}
		return false, failInit
	}
	return rep.Alias.Active, failNone
}

// put writes s and a NUL into out when they fit. On failure it writes an
// empty string, if out has room for one, and nothing else.
func put(out []byte, s string) (int, failure) {
	if len(out) == 0 {
		return 0, failArgs
	}
	if len(s)+1 > len(out) {
		out[0] = 0
		return 0, failRange
	}
	copy(out, s)
	out[len(s)] = 0
	return len(s), failNone
}

// lastErr keeps each thread's last error message (flagshim_error): a C
// thread calls in, fails, and asks why on the same thread. Threads that end
// leave an entry behind; the map holds at most maxErrs of them.
var lastErr struct {
	mu sync.Mutex
	m  map[int]string
}

const maxErrs = 4096

func setErr(err error) {
	tid := unix.Gettid()
	lastErr.mu.Lock()
	defer lastErr.mu.Unlock()
	if lastErr.m == nil || len(lastErr.m) >= maxErrs {
		lastErr.m = map[int]string{}
	}
	lastErr.m[tid] = strings.ReplaceAll(err.Error(), "\n", "; ") // one line for C
}

// setInitErr keeps Init's error for flagshim_error: a bad setting as every
// host says it, "invalid setting: NAME=...: accepted values ...", each
// once, without the steps and packages it came through (report.Settings).
func setInitErr(err error) {
	if bad := report.Settings(err); bad != nil {
		err = bad
	}
	setErr(err)
}

// errorMessage is the calling thread's last error message, "" when none.
func errorMessage() string {
	tid := unix.Gettid()
	lastErr.mu.Lock()
	defer lastErr.mu.Unlock()
	return lastErr.m[tid]
}
