package flagshim

import (
	"time"

	"github.com/flagos-ai/flagshim/tier/isolated"
)

// ErrProbeChild is wrapped by Init's error when the isolated tier could
// not start a probe child at all (the program's binary cannot be executed,
// no process can be created): a fault of the program, not a fact of the
// machine. Each vendor is then "not available" with the same reason.
var ErrProbeChild = isolated.ErrStart

// ServeProbeChild makes this program its own isolated probe child
// (FLAGOS_PROBE=isolated re-executes the running binary to probe each
// vendor in a process of its own). Call it first in main, before anything
// the program would not want done twice: when the process was started as a
// child by flagshim's supervisor (a token in FLAGSHIM_PROBE_CHILD that
// matches the request on the pipe the supervisor passed), it probes the
// one vendor asked, writes the answer and exits; otherwise it returns at
// once. A program that never calls it cannot use the isolated tier: Init
// then reports every vendor "not available" and returns an error wrapping
// ErrProbeChild. cli.Run calls it.
//
// The variable alone never makes a process a child: a FLAGSHIM_PROBE_CHILD
// inherited by any other process is removed and ignored, and the C shared
// library never serves.
func ServeProbeChild() { isolated.Serve() }

// WaitProbeChildren waits until every isolated probe child this process
// started has exited and been reaped, at most timeout, and returns how many
// are still running. Init returns as soon as each child has answered,
// while the child is still tearing its driver down (about 55 ms after
// cuInit on an H200); a program that exits right after Init and does not
// want a child to outlive it (the CLI) calls this last.
func WaitProbeChildren(timeout time.Duration) int { return isolated.Wait(timeout) }
