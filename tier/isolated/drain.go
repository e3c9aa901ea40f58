package isolated

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
// The rule: once the pipe of an exited child holds no byte, what the child
// wrote is all in its reader's hands. A read deadline set then (finish)
// makes the reader's next read fail at once, after it has handled what it
// holds, and the readers take that for the pipe's end: nothing the child
// wrote is lost, however late the reader runs. More could come only from
// something the child left behind, which is not its answer. Asking whether
// the reader waits in read instead (drained, for a pipe that takes no
// deadline) has a window: a read that has returned its bytes but not yet
// said so looks like a reader waiting on an empty pipe, and a loaded
// machine can keep a goroutine in that window past a drain's tick.

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

// empty says whether the pipe holds no byte.
func (w *watched) empty() bool { return pending(w.f) == 0 }

// finish ends the reading once the reader has handled what it holds: its
// next read fails at once (a read deadline in the past,
// os.ErrDeadlineExceeded). false where the pipe takes no deadline.
func (w *watched) finish() bool { return w.f.SetReadDeadline(time.Now()) == nil }

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

// waitDrained waits until done is closed (the reader has ended: finished
// once the pipe is empty), or until; where the pipe takes no deadline,
// until w is drained.
func waitDrained(done <-chan struct{}, w *watched, until time.Time) {
	tick := time.NewTicker(drainTick)
	defer tick.Stop()
	finished := false
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			switch {
			case now.After(until):
				return
			case finished || !w.empty():
			case w.finish():
				finished = true
			case w.drained():
				return
			}
		}
	}
}
