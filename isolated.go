package flagshim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/probe"
)

// The isolated probe tier: the exact answer of each built-in driver,
// computed in a child process of the program's own binary, so a driver that
// crashes (SIGSEGV, abort) or hangs in its load or init costs a child, never
// this process. The way ollama isolates GPU discovery.
//
// Protocol: the parent runs os.Executable() with FLAGSHIM_PROBE_CHILD set
// to "<parent pid>:<vendor>" (with ":memory" after it to learn each
// device's free memory too, WithFreeMemory) and a pipe as file descriptor 3.
// The child (child.go, dispatched from this package's init before main
// runs) loads that one driver exactly and writes, one line each, "step <C
// function>" before each call of the load, then "facts <JSON of
// driver.Facts>", and exits. The parent reads until the facts line, the
// pipe's end or FLAGOS_PROBE_TIMEOUT (then it kills the child): the last
// step a dead child reported is where its driver crashed or hung. Every
// vendor's child runs at once.
//
// The answer is taken as soon as the facts line arrives: the child's exit
// (a driver's teardown: about 55 ms after cuInit on an H200) and anything
// its driver spawned that still holds the pipe or stderr (a helper daemon
// inheriting the descriptors) are not waited for. So is a child killed on
// the timeout, which a driver stuck in the kernel can keep from exiting.
// Such children are reaped in the background (reap.go); waiting on a dead
// child's stderr is bounded by childWaitDelay.

// probeChildEnv marks a probe child; see child.go.
const probeChildEnv = "FLAGSHIM_PROBE_CHILD"

// childMemory is the third field of probeChildEnv asking for free memory.
const childMemory = "memory"

// childWaitDelay bounds how long reaping a child that has exited waits for
// its stderr to close, which a process it left behind may hold open.
const childWaitDelay = 2 * time.Second

// isolation runs the children of one Init, at most once per vendor.
type isolation struct {
	timeout time.Duration
	log     *zap.Logger
	memory  bool // WithFreeMemory

	mu      sync.Mutex
	results map[device.Type]*isoChild
}

// isoChild is one vendor's child: started once, its answer kept for every
// reader.
type isoChild struct {
	start sync.Once
	ch    chan driver.Facts
}

func newIsolation(timeout time.Duration, log *zap.Logger, memory bool) *isolation {
	return &isolation{timeout: timeout, log: log, memory: memory, results: map[device.Type]*isoChild{}}
}

// facts is the WithFacts function of vendor t: the first vendor asked
// starts the child of every vendor registered so far, in parallel, and a
// vendor registered later starts its own when asked (WithEveryProbe asks
// each one as it registers); each waits for its own.
func (iso *isolation) facts(t device.Type) func(*driver.Backend) driver.Facts {
	c := &isoChild{ch: make(chan driver.Facts, 1)}
	iso.mu.Lock()
	iso.results[t] = c
	iso.mu.Unlock()
	return func(*driver.Backend) driver.Facts {
		iso.mu.Lock()
		for vt, vc := range iso.results {
			vc.start.Do(func() { go func() { vc.ch <- iso.probe(vt) }() })
		}
		iso.mu.Unlock()
		f := <-c.ch
		c.ch <- f // for a second reader
		return f
	}
}

// probe runs vendor t's child and turns what it said into Facts.
func (iso *isolation) probe(t device.Type) driver.Facts {
	start := time.Now()
	f, err := iso.run(t)
	if err != nil {
		f = driver.Facts{Result: failedFacts(t, err)}
	}
	f.Tier = driver.TierIsolated
	if f.Extra == nil {
		f.Extra = map[string]string{}
	}
	f.Extra["isolated.duration"] = time.Since(start).String()
	iso.log.Debug("isolated probe", zap.String("vendor", string(t)), zap.Duration("duration", time.Since(start)),
		zap.Bool("available", f.Result.Available), zap.String("reason", f.Result.Reason))
	return f
}

// childError says what became of a child that gave no answer.
type childError struct {
	vendor   device.Type
	step     string // the last step it reported
	signal   syscall.Signal
	exit     int
	timedOut time.Duration
	stderr   string
	err      error
}

func (e *childError) Error() string {
	where := "while loading its driver"
	if e.step != "" {
		where = "in " + e.step
	}
	var what string
	switch {
	case e.timedOut > 0:
		what = fmt.Sprintf("the driver did not return within %s (FLAGOS_PROBE_TIMEOUT) %s; the probe's child was killed", e.timedOut, where)
	case e.signal != 0:
		what = fmt.Sprintf("the driver crashed %s (signal %d: %s)", where, int(e.signal), e.signal)
	case e.err != nil:
		what = fmt.Sprintf("the probe's child could not run: %v", e.err)
	default:
		what = fmt.Sprintf("the probe's child exited with status %d %s without an answer", e.exit, where)
	}
	if s := strings.TrimSpace(e.stderr); s != "" && e.signal == 0 {
		what += "; it printed: " + lastLine(s)
	}
	return what
}

func (e *childError) Unwrap() error {
	if e.timedOut > 0 {
		return driver.ErrTimedOut
	}
	return nil
}

func failedFacts(t device.Type, err error) probe.Result {
	return probe.Result{Reason: fmt.Sprintf("%s: %v (isolated probe; the driver was not loaded in this process)", t, err)}
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// run starts the child of vendor t and reads its answer.
func (iso *isolation) run(t device.Type) (driver.Facts, error) {
	exe, err := os.Executable()
	if err != nil {
		return driver.Facts{}, &childError{vendor: t, err: err}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return driver.Facts{}, &childError{vendor: t, err: err}
	}
	defer r.Close()
	cmd := exec.Command(exe)
	mark := strconv.Itoa(os.Getpid()) + ":" + string(t)
	if iso.memory {
		mark += ":" + childMemory
	}
	cmd.Env = append(os.Environ(), probeChildEnv+"="+mark)
	cmd.ExtraFiles = []*os.File{w}
	var stderr tail
	cmd.Stderr = &stderr
	cmd.Dir = "/"
	cmd.WaitDelay = childWaitDelay
	if err := cmd.Start(); err != nil {
		w.Close()
		return driver.Facts{}, &childError{vendor: t, err: err}
	}
	w.Close()
	children.add()
	reapLater := func() { go func() { _ = cmd.Wait(); children.done() }() }

	type answer struct {
		facts *driver.Facts
		step  string
	}
	lines := make(chan answer, 1)
	go func() {
		var a answer
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for a.facts == nil && sc.Scan() {
			kind, rest, _ := strings.Cut(sc.Text(), " ")
			switch kind {
			case "step":
				a.step = rest
			case "facts": // the last line: the answer is in
				var f driver.Facts
				if json.Unmarshal([]byte(rest), &f) == nil {
					a.facts = &f
				}
			}
		}
		lines <- a
	}()
	timer := time.NewTimer(iso.timeout)
	defer timer.Stop()
	var a answer
	var timedOut bool
	select {
	case a = <-lines:
	case <-timer.C:
		timedOut = true
		_ = cmd.Process.Kill()
		_ = r.Close() // the scanner stops even if something the child spawned holds the pipe
		a = <-lines
	}
	if timedOut {
		reapLater()
		return driver.Facts{}, &childError{vendor: t, step: a.step, stderr: stderr.String(), timedOut: iso.timeout}
	}
	if a.facts != nil {
		reapLater()
		return *a.facts, nil
	}
	werr := cmd.Wait()
	children.done()
	ce := &childError{vendor: t, step: a.step, stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ce.signal = ws.Signal()
		} else if sig := crashSignal(ce.stderr); sig != 0 {
			ce.signal = sig
		} else {
			ce.exit = ee.ExitCode()
		}
	} else if werr != nil {
		ce.err = werr
	}
	return driver.Facts{}, ce
}

// tail keeps the first 4 KiB a child writes to stderr (where the Go
// runtime names a fatal signal) and the last 1 KiB.
type tail struct {
	mu         sync.Mutex
	head, last []byte
}

// Write keeps what it can and takes all of p: a short write would stop
// os/exec's copy and leave the child writing into a closed pipe.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if room := 4096 - len(t.head); room > 0 {
		k := min(room, len(p))
		t.head = append(t.head, p[:k]...)
		p = p[k:]
	}
	t.last = append(t.last, p...)
	if len(t.last) > 1024 {
		t.last = t.last[len(t.last)-1024:]
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.last)
}

// fatalSignals are the signals a crashing driver raises; the Go runtime of
// a child that faults inside C code prints "SIGSEGV: segmentation
// violation" and exits 2 rather than dying of the signal.
var fatalSignals = []syscall.Signal{syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGBUS, syscall.SIGILL, syscall.SIGFPE}

// crashSignal finds the fatal signal a Go crash report names.
func crashSignal(stderr string) syscall.Signal {
	for _, line := range strings.Split(stderr, "\n") {
		for _, sig := range fatalSignals {
			if name := signalName(sig); strings.HasPrefix(line, name+":") || strings.Contains(line, "signal "+name) {
				return sig
			}
		}
	}
	return 0
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGILL:
		return "SIGILL"
	case syscall.SIGFPE:
		return "SIGFPE"
	}
	return s.String()
}
