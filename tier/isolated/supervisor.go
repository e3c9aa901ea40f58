package isolated

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/probe"
	"github.com/flagos-ai/flagshim/tier"
)

// Errors of the supervisor; test them with errors.Is.
var (
	// ErrNoChildService: this program never called Serve, so it cannot be
	// its own probe child.
	ErrNoChildService = errors.New("isolated: this program does not serve probe children")
	// ErrStart: a child could not be started (the binary is gone, no
	// process could be created).
	ErrStart = errors.New("isolated: the probe child could not be started")
	// ErrProtocol: the child wrote something the protocol does not allow.
	ErrProtocol = errors.New("isolated: the probe child broke its protocol")
)

// MaxLine bounds one line of a child's answer: the facts of device.MaxDevices
// devices fit.
const MaxLine = 4 << 20

// exitGrace is how far past the probe's deadline the pipes of a child
// that exited may still be read (drain.go): one that exits at the
// deadline still has its last lines read. The drain's rule ends the wait
// long before, unless the readers never run or something the child left
// behind keeps writing.
const exitGrace = 100 * time.Millisecond

// Config configures a Supervisor.
type Config struct {
	Timeout time.Duration // FLAGOS_PROBE_TIMEOUT: bounds each child's whole exchange
	Log     *zap.Logger
	Memory  bool // learn each device's free memory too (memory.go: from the management library, beside the child)
	// NoShutdown leaves the management library that answered Memory
	// initialized (presence.WithoutShutdown): for a process that exits
	// soon after.
	NoShutdown bool
	// Exe is the binary to start; "" is this very program (/proc/self/exe,
	// else os.Executable). For tests.
	Exe string
	// Trace, when set, asks each child to trace the C calls it makes (as
	// clib.SetTracer does in this process: FLAGOS_TRACE) and logs each
	// one here, at info level, with the child's vendor.
	Trace *zap.Logger
}

// Supervisor runs the children of one Init, at most once per vendor.
type Supervisor struct {
	cfg Config

	mu       sync.Mutex
	children map[device.Type]*child
	startErr []error
}

// child is one vendor's child: started once, its answer kept for every
// reader.
type child struct {
	start sync.Once
	done  chan struct{}
	facts tier.Facts
	dry   func() (tier.Facts, bool) // see Facts; nil: always a child
}

// New returns a Supervisor. It starts nothing.
func New(cfg Config) *Supervisor {
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = driver.DefaultInitTimeout
	}
	return &Supervisor{cfg: cfg, children: map[device.Type]*child{}}
}

// Facts is the driver.WithFacts function of vendor t: the first vendor
// asked starts the child of every vendor given to Facts so far, in
// parallel; a vendor given later starts its own when asked. Each waits for
// its own child's answer.
//
// dry, when not nil, is asked first, in the parent (a backend's
// FactsWithoutLoading): where it knows the answer without running any code
// of the vendor's library (no library, or no device node), no child is
// started for the vendor, whose answer is dry's.
func (s *Supervisor) Facts(t device.Type, dry func() (tier.Facts, bool)) func(*driver.Backend) tier.Facts {
	c := &child{done: make(chan struct{}), dry: dry}
	s.mu.Lock()
	s.children[t] = c
	s.mu.Unlock()
	return func(*driver.Backend) tier.Facts {
		s.mu.Lock()
		for vt, vc := range s.children {
			vc.start.Do(func() {
				go func() {
					vc.facts = s.probe(vt, vc.dry)
					close(vc.done)
				}()
			})
		}
		s.mu.Unlock()
		<-c.done
		return c.facts
	}
}

// Err joins the errors of the children that could not be started at all
// (each matching ErrStart; ErrNoChildService too where the program does
// not serve children): not a fact of the machine but of this program,
// which Init reports.
func (s *Supervisor) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.startErr...)
}

// probe runs vendor t's child and turns what it said into Facts; or
// answers dry's facts where dry knows them without a child.
func (s *Supervisor) probe(t device.Type, dry func() (tier.Facts, bool)) tier.Facts {
	start := time.Now()
	if dry != nil {
		if f, ok := dry(); ok {
			f.Tier = tier.Isolated
			if f.Extra == nil {
				f.Extra = map[string]string{}
			}
			f.Extra["isolated.child"] = "none: no code of the driver would run (see the reason)"
			s.cfg.Log.Debug("isolated probe without a child", zap.String("vendor", string(t)), zap.String("reason", f.Result.Reason))
			return f
		}
	}
	var mem memoryQuery
	if s.cfg.Memory {
		mem = askMemory(t, s.cfg.NoShutdown) // beside the child, not after it
	}
	f, err := s.run(t)
	if err != nil {
		if errors.Is(err, ErrStart) {
			s.mu.Lock()
			s.startErr = append(s.startErr, fmt.Errorf("%s: %w", t, err))
			s.mu.Unlock()
		}
		f = tier.Facts{Result: probe.Result{Reason: fmt.Sprintf("%s: %v (isolated probe; the driver was not loaded in this process)", t, err)}}
	}
	mem.fill(&f, start.Add(s.cfg.Timeout)) // the same absolute deadline as the child's
	f.Tier = tier.Isolated
	if f.Extra == nil {
		f.Extra = map[string]string{}
	}
	f.Extra["isolated.duration"] = time.Since(start).String()
	s.cfg.Log.Debug("isolated probe", zap.String("vendor", string(t)), zap.Duration("duration", time.Since(start)),
		zap.Bool("available", f.Result.Available), zap.String("reason", f.Result.Reason))
	return f
}

// executable is the binary a child runs: this very program.
func (s *Supervisor) executable() string {
	if s.cfg.Exe != "" {
		return s.cfg.Exe
	}
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return "/proc/self/exe"
}

// event is what the answer reader saw.
type event struct {
	step  string      // a step line
	facts *tier.Facts // the facts line
	err   error       // ErrProtocol, or a read error
	eof   bool        // the pipe was closed with no more lines
}

// run starts the child of vendor t and reads its answer within the
// timeout.
func (s *Supervisor) run(t device.Type) (tier.Facts, error) {
	if !served.Load() {
		return tier.Facts{}, fmt.Errorf("%w: %w: FLAGOS_PROBE=isolated re-executes the program as its own probe child, so a Go program must call flagshim.ServeProbeChild() first in main (the flagshim CLI does); or use FLAGOS_PROBE=exact or presence", ErrStart, ErrNoChildService)
	}
	exe := s.executable()
	token, err := newToken()
	if err != nil {
		return tier.Facts{}, fmt.Errorf("%w: %v", ErrStart, err)
	}
	p, err := newPipes()
	if err != nil {
		return tier.Facts{}, fmt.Errorf("%w: %v", ErrStart, err)
	}
	defer p.closeParent()
	trace := ""
	if s.cfg.Trace != nil {
		trace = " trace"
	}
	// The request is in the pipe before the child starts: it never waits.
	if _, err := fmt.Fprintf(p.reqW, "%s %s%s\n", token, t, trace); err != nil {
		return tier.Facts{}, fmt.Errorf("%w: writing the request: %v", ErrStart, err)
	}
	p.reqW.Close()
	argv0 := os.Args[0]
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       []string{argv0},
		Env:        append(os.Environ(), EnvVar+"="+token),
		ExtraFiles: []*os.File{p.ansW, p.reqR},
		Stderr:     p.errW, // an *os.File: os/exec copies nothing, so Wait waits for the process alone
		Dir:        "/",
	}
	if err := cmd.Start(); err != nil {
		name := exe
		if exe == "/proc/self/exe" {
			if real, err := os.Readlink(exe); err == nil {
				name = exe + " (" + real + ")"
			}
		}
		return tier.Facts{}, fmt.Errorf("%w: %s: %v", ErrStart, name, err)
	}
	p.closeChildEnds()
	children.add()

	exited := make(chan error, 1)
	go func() {
		exited <- cmd.Wait()
		children.done()
	}()
	var stderr tail
	errR := &watched{f: p.errR, stall: stall.stderr}
	stderrDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(&stderr, errR)
		close(stderrDone)
	}()
	// FLAGOS_PROBE_TIMEOUT bounds the whole exchange, the draining of an
	// exited child's pipes too (drain.go): until the deadline, or a grace
	// past it for a child that exited at the deadline.
	deadlineAt := time.Now().Add(s.cfg.Timeout)
	drainEnd := func() time.Time {
		if end := time.Now().Add(exitGrace); end.After(deadlineAt) {
			return end
		}
		return deadlineAt
	}
	// ended says how a child that gave no answer ended, from its exit and
	// all it wrote to stderr before it.
	ended := func(step string, gone error) error {
		waitDrained(stderrDone, errR, drainEnd())
		return exitError(t, step, gone, stderr.String())
	}
	ansR := &watched{f: p.ansR, stall: stall.answer}
	events := make(chan event, 16)
	stop := make(chan struct{})
	defer close(stop)
	go readAnswer(ansR, events, stop, s.traced(t))

	kill := func() { _ = cmd.Process.Kill() }
	deadline := time.NewTimer(time.Until(deadlineAt))
	defer deadline.Stop()
	var (
		step     string
		eof      bool
		gone     error            // the child's end, once it has exited
		exitSeen bool             // gone is set
		drain    <-chan time.Time // ticks once the child has exited
		until    time.Time        // the drain's bound
		finished bool             // the answer's reader ends after what it holds (drain.go)
	)
	// handle takes one event; done when it decided the answer.
	handle := func(ev event) (f tier.Facts, done bool, err error) {
		switch {
		case ev.step != "":
			step = ev.step
		case ev.facts != nil:
			if err := ev.facts.Check(); err != nil {
				kill()
				return tier.Facts{}, true, &childError{vendor: t, step: step, protocol: fmt.Sprintf("its facts are impossible: %v", err)}
			}
			return *ev.facts, true, nil // the child is reaped in the background
		case ev.err != nil:
			kill()
			return tier.Facts{}, true, &childError{vendor: t, step: step, protocol: ev.err.Error()}
		case ev.eof:
			if exitSeen {
				return tier.Facts{}, true, ended(step, gone)
			}
			eof = true // the child closed its answer: its exit tells why
			events = nil
		}
		return tier.Facts{}, false, nil
	}
	for {
		select {
		case ev := <-events:
			if f, done, err := handle(ev); done {
				return f, err
			}
		case gone = <-exited:
			exitSeen = true
			exited = nil
			if eof {
				return tier.Facts{}, ended(step, gone)
			}
			// Lines written before the exit may still be in the pipe, or
			// in the reader's hands: read them all (drain.go).
			ticker := time.NewTicker(drainTick)
			defer ticker.Stop()
			drain, until = ticker.C, drainEnd()
		case now := <-drain:
			if now.Before(until) {
				switch {
				case finished || !ansR.empty():
					continue // the reader's answer or end comes as an event
				case ansR.finish():
					finished = true
					continue
				case !ansR.drained():
					continue
				}
			}
			// What the reader sent before it waited again is in events.
			for len(events) > 0 {
				if f, done, err := handle(<-events); done {
					return f, err
				}
			}
			return tier.Facts{}, ended(step, gone)
		case <-deadline.C:
			if exitSeen {
				continue // the drain decides, within the same bound
			}
			kill()
			p.ansR.Close() // the reader stops even if something the child spawned holds the pipe
			what := "did not return"
			if eof {
				what = "closed its answer without one and did not exit"
			}
			return tier.Facts{}, &childError{vendor: t, step: step, stderr: stderr.String(), timedOut: s.cfg.Timeout, what: what}
		}
	}
}

// tracedCall is one "trace" line of a child: what clib's tracer logs.
type tracedCall struct {
	Lib      string `json:"lib"`
	Func     string `json:"func"`
	Args     string `json:"args"`
	Result   int    `json:"result"`
	Duration int64  `json:"duration"` // ns
}

// traced is what readAnswer does with vendor t's "trace" lines: log each
// call to the trace logger, as this process's own calls are logged.
func (s *Supervisor) traced(t device.Type) func(string) error {
	return func(line string) error {
		if s.cfg.Trace == nil {
			return fmt.Errorf("%w: a trace line, and no trace was asked", ErrProtocol)
		}
		var c tracedCall
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return fmt.Errorf("%w: a trace line that is not JSON: %v", ErrProtocol, err)
		}
		s.cfg.Trace.Info("call", zap.String("lib", c.Lib), zap.String("func", c.Func), zap.String("args", c.Args),
			zap.Int("result", c.Result), zap.Duration("duration", time.Duration(c.Duration)), zap.String("child", string(t)))
		return nil
	}
}

// readAnswer reads the child's lines until its facts, an error or the end,
// and gives up when stop is closed (the supervisor has decided). trace
// takes the text of each "trace" line.
func readAnswer(r io.Reader, events chan<- event, stop <-chan struct{}, trace func(string) error) {
	send := func(ev event) bool {
		select {
		case events <- ev:
			return true
		case <-stop:
			return false
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, ErrProtocol) {
				send(event{err: err})
			} else {
				send(event{eof: true}) // the end, or the pipe closed under the reader
			}
			return
		}
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "step":
			if !send(event{step: rest}) {
				return
			}
		case "trace":
			if err := trace(rest); err != nil {
				send(event{err: err})
				return
			}
		case "facts":
			var f tier.Facts
			if err := json.Unmarshal([]byte(rest), &f); err != nil {
				send(event{err: fmt.Errorf("%w: its facts are not JSON: %v", ErrProtocol, err)})
				return
			}
			send(event{facts: &f})
			return
		default:
			send(event{err: fmt.Errorf("%w: an unknown line %q", ErrProtocol, clip(line, 80))})
			return
		}
	}
}

// readLine reads one line of at most MaxLine bytes, without its newline.
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return "", fmt.Errorf("%w: a line longer than %d bytes", ErrProtocol, MaxLine)
		}
		switch {
		case err == nil:
			return strings.TrimSuffix(string(buf), "\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return "", fmt.Errorf("%w: a last line without its newline", ErrProtocol)
		default:
			return "", err
		}
	}
}

// exitError says how a child that gave no answer ended.
func exitError(t device.Type, step string, werr error, stderr string) error {
	ce := &childError{vendor: t, step: step, stderr: stderr}
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ce.signal = ws.Signal()
		} else if sig := crashSignal(stderr); sig != 0 {
			ce.signal = sig
		} else {
			ce.exit = ee.ExitCode()
		}
	case werr != nil:
		ce.err = werr
	}
	return ce
}

func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// pipes are a child's three: the answer (fd 3), the request (fd 4) and
// stderr.
type pipes struct {
	ansR, ansW, reqR, reqW, errR, errW *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.ansR, p.ansW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.reqR, p.reqW, err = os.Pipe(); err != nil {
		p.closeParent()
		return nil, err
	}
	if p.errR, p.errW, err = os.Pipe(); err != nil {
		p.closeParent()
		return nil, err
	}
	return &p, nil
}

// closeChildEnds closes the parent's copies of the child's ends.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.ansW, p.reqR, p.errW} {
		if f != nil {
			f.Close()
		}
	}
}

// closeParent closes everything the parent still holds. The stderr reader
// stops at the child's exit, or when this closes its end.
func (p *pipes) closeParent() {
	for _, f := range []*os.File{p.ansR, p.ansW, p.reqR, p.reqW, p.errW} {
		if f != nil {
			f.Close()
		}
	}
	if p.errR != nil {
		errR := p.errR
		// Something the child spawned may hold stderr open: stop reading
		// a while after the child's answer or end.
		time.AfterFunc(childWaitDelay, func() { errR.Close() })
	}
}

// childWaitDelay is how long a child's stderr is read after the exchange.
const childWaitDelay = 2 * time.Second

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
