package isolated

import (
	"bufio"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/onecpu"
	"github.com/flagos-ai/flagshim/vendors"
)

// EnvVar carries the child's token.
const EnvVar = "FLAGSHIM_PROBE_CHILD"

// The child's descriptors: the answer pipe and the request pipe.
const (
	answerFD  = 3
	requestFD = 4
)

// requestWait bounds how long a would-be child waits for its request: the
// supervisor wrote it before starting the child, so it is there at once.
const requestWait = 2000 // ms

// served says that this program serves probe children (Serve was called).
var served atomic.Bool

// Serve makes this program able to serve as its own isolated probe child,
// and, when this process was started as one by a Supervisor, serves the
// request and exits. Call it first in main (cli.Run does): the child runs
// nothing of the program but its package inits. In any other process it
// returns at once; a FLAGSHIM_PROBE_CHILD inherited from elsewhere is
// removed from the environment and ignored.
func Serve() {
	served.Store(true)
	token, ok := os.LookupEnv(EnvVar)
	if !ok {
		return
	}
	os.Unsetenv(EnvVar)
	req, ok := readRequest(token)
	if !ok {
		return
	}
	os.Exit(serveRequest(req))
}

// childMemoryLimit is the heap at which the child's collector runs
// (lazyCollector): far above what the largest answer needs (about 10 MiB
// for 4096 devices), a bound should a driver misbehave.
const childMemoryLimit = 256 << 20

// lazyCollector leaves the child's garbage to its exit: the child answers
// once and exits, so a collection frees nothing it will keep, and on its
// one CPU it only delays the answer (13 of 44 ms for 4096 fake devices on
// an H100 machine, docs/benchmarks.md). The collector still runs should
// the heap reach childMemoryLimit. GOGC or GOMEMLIMIT, where the user set
// either, are the user's and stay.
func lazyCollector() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(childMemoryLimit)
	debug.SetGCPercent(-1)
}

// request is what the supervisor asked.
type request struct {
	vendor device.Type
	trace  bool // send each C call as a "trace" line (FLAGOS_TRACE)
}

// readRequest reads and checks the request on fd 4: both descriptors must
// be pipes, the request must come within requestWait and begin with token.
func readRequest(token string) (request, bool) {
	if token == "" || !isPipe(answerFD) || !isPipe(requestFD) {
		return request{}, false
	}
	fds := []unix.PollFd{{Fd: requestFD, Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, requestWait); err != nil || n != 1 {
		return request{}, false
	}
	f := os.NewFile(requestFD, "flagshim-probe-request")
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 512)).ReadString('\n')
	if err != nil {
		return request{}, false
	}
	fields := strings.Fields(line)
	if len(fields) < 2 || len(fields) > 3 || subtle.ConstantTimeCompare([]byte(fields[0]), []byte(token)) != 1 {
		return request{}, false
	}
	return request{vendor: device.Type(fields[1]), trace: len(fields) == 3 && fields[2] == "trace"}, true
}

// isPipe reports whether fd is an open pipe.
func isPipe(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFIFO
}

// serveRequest loads the vendor's driver exactly and writes its steps and
// facts to fd 3; the exit status.
func serveRequest(req request) int {
	out := os.NewFile(answerFD, "flagshim-probe-answer")
	defer out.Close()
	// A process that initializes a driver and exits: on one CPU its exit
	// is cheaper (internal/onecpu). Best effort.
	_, _ = onecpu.Pin()
	lazyCollector()
	v, ok := vendors.Lookup(req.vendor)
	if !ok {
		fmt.Fprintf(os.Stderr, "flagshim probe child: unknown vendor %q\n", req.vendor)
		return 2
	}
	w := &answer{w: bufio.NewWriter(out)}
	if req.trace {
		// Each C call the driver core makes here, as the parent's tracer
		// would log it (clib.SetTracer), goes to the parent as a line.
		enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{EncodeDuration: zapcore.NanosDurationEncoder, LineEnding: "\n"})
		clib.SetTracer(zap.New(zapcore.NewCore(enc, zapcore.AddSync(traceWriter{w}), zapcore.InfoLevel)))
	}
	root := os.Getenv("FLAGOS_TEST_ROOT") // checked by the supervisor's Init: absolute or unset
	if !filepath.IsAbs(root) {
		root = ""
	}
	b := driver.New(v,
		driver.WithMakers(vendors.Makers()), driver.WithSysRoot(root),
		driver.WithInitTimeout(1<<62), // the supervisor keeps the time
		driver.WithStepHook(func(step string) {
			w.line("step " + oneLine(step) + "\n")
		}))
	f := b.ExactFacts(false)
	clib.SetTracer(nil)
	line, err := json.Marshal(f)
	if err != nil {
		fmt.Fprintf(os.Stderr, "flagshim probe child: %v\n", err)
		return 1
	}
	if err := w.line("facts " + string(line) + "\n"); err != nil {
		fmt.Fprintf(os.Stderr, "flagshim probe child: %v\n", err)
		return 1
	}
	return 0
}

// answer writes whole lines to the answer pipe, one at a time: the driver's
// calls may be traced from more than one goroutine.
type answer struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (a *answer) line(s string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, _ = a.w.WriteString(s)
	return a.w.Flush()
}

// traceWriter makes each traced call (one JSON object and its newline, as
// zap writes an entry) a "trace" line of the answer.
type traceWriter struct{ a *answer }

func (t traceWriter) Write(p []byte) (int, error) {
	if err := t.a.line("trace " + oneLine(strings.TrimSuffix(string(p), "\n")) + "\n"); err != nil {
		return 0, err
	}
	return len(p), nil
}

// oneLine keeps a step on its line.
func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }
