package isolate

import (
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// When a child has exited, what it wrote before its exit is all in its
// pipes already, but the goroutines that read them may not have run yet:
// on a loaded machine, for a while longer than any fixed grace. A fixed
// grace therefore took a whole answer that was still being read for no
// answer at all. Something the child spawned may also hold a pipe open,
// so waiting for the pipe's end is no rule either.
//
// The rule: a pipe of an exited child is drained once its reader is
// waiting in read and the pipe holds no byte. More can then come only
// from something the child left behind, which is not its answer.

// stall delays the first read of a child's answer and of its stderr: what
// a loaded machine does to their readers, which tests do on purpose. Set
// it before a probe starts; never outside tests.
var stall struct{ answer, stderr time.Duration }

// drainTick is how often an exited child's pipes are looked at.
const drainTick = 20 * time.Millisecond

// watched is a pipe's read end that says whether its reader is waiting
// in read.
type watched struct {
	f       *os.File
	reading atomic.Bool
	stall   time.Duration // before the first read: tests stand for a loaded machine with it
}

func (w *watched) Read(p []byte) (int, error) {
	if w.stall > 0 {
		time.Sleep(w.stall)
		w.stall = 0
	}
	w.reading.Store(true)
	n, err := w.f.Read(p)
	w.reading.Store(false)
	return n, err
}

// drained says whether the reader waits in read on an empty pipe. A pipe
// that cannot be asked is taken as drained: the caller's bound then holds
// as before.
func (w *watched) drained() bool {
	if !w.reading.Load() {
		return false // the reader holds bytes it has not handled yet
	}
	return pending(w.f) == 0
}

// pending is how many bytes the pipe holds unread (FIONREAD); 0 when it
// cannot say.
func pending(f *os.File) int {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n, ierr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) {
		n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) // FIONREAD: the same request on Linux
	}); err != nil || ierr != nil || n < 0 {
		return 0
	}
	return n
}

// waitDrained waits until done is closed, or w is drained, or until.
func waitDrained(done <-chan struct{}, w *watched, until time.Time) {
	tick := time.NewTicker(drainTick)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			if w.drained() || now.After(until) {
				return
			}
		}
	}
}
