package isolated

import (
	"sync"
	"time"
)

// children counts the probe children of this process not yet reaped.
var children reaper

type reaper struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

func (r *reaper) add() {
	r.mu.Lock()
	if r.n == 0 {
		r.idle = make(chan struct{})
	}
	r.n++
	r.mu.Unlock()
}

func (r *reaper) done() {
	r.mu.Lock()
	r.n--
	if r.n == 0 {
		close(r.idle)
	}
	r.mu.Unlock()
}

// Wait waits until every probe child this process started has exited and
// been reaped, at most timeout, and returns how many are still running.
// Children are reaped as soon as they exit, in the background; a program
// that exits right after Init and does not want a child to outlive it (the
// CLI) calls this last.
func Wait(timeout time.Duration) int { return children.wait(timeout) }

// wait waits until r counts no child, at most timeout, and returns the
// count then.
func (r *reaper) wait(timeout time.Duration) int {
	r.mu.Lock()
	if r.n == 0 {
		r.mu.Unlock()
		return 0
	}
	idle := r.idle
	r.mu.Unlock()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}
