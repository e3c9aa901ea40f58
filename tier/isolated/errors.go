package isolated

import (
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// childError says what became of a child that gave no answer.
type childError struct {
	vendor   device.Type
	step     string // the last step it reported
	signal   syscall.Signal
	exit     int
	timedOut time.Duration
	what     string // with timedOut: what the child did ("did not return")
	protocol string // how it broke the protocol
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
	case e.protocol != "":
		what = fmt.Sprintf("the probe child broke its protocol %s: %s; it was killed", where, e.protocol)
	case e.timedOut > 0:
		what = fmt.Sprintf("the driver %s within %s (FLAGOS_PROBE_TIMEOUT) %s; the probe's child was killed", e.what, e.timedOut, where)
	case e.signal != 0:
		what = fmt.Sprintf("the driver crashed %s (signal %d: %s)", where, int(e.signal), e.signal)
	case e.err != nil:
		what = fmt.Sprintf("the probe's child could not run: %v", e.err)
	default:
		what = fmt.Sprintf("the probe's child exited with status %d %s without an answer", e.exit, where)
	}
	if s := strings.TrimSpace(e.stderr); s != "" && e.signal == 0 && e.protocol == "" {
		what += "; it printed: " + lastLine(s)
	}
	return what
}

// Unwrap gives driver.ErrTimedOut for a timeout and ErrProtocol for a
// broken protocol.
func (e *childError) Unwrap() error {
	switch {
	case e.protocol != "":
		return ErrProtocol
	case e.timedOut > 0:
		return driver.ErrTimedOut
	}
	return nil
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return clip(s, 200)
}

// tail keeps the first 4 KiB a child writes to stderr (where the Go
// runtime names a fatal signal) and the last 1 KiB.
type tail struct {
	mu         sync.Mutex
	head, last []byte
}

// Write keeps what it can and takes all of p: a short write would stop
// the copy and leave the child writing into a closed pipe.
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
