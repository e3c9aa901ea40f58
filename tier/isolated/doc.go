// Package isolated is the isolated probe tier's supervisor and its child:
// each vendor's exact answer is computed in a child process, so a driver
// that crashes (SIGSEGV, abort) or hangs in its load or init costs a child,
// never the caller. The way ollama isolates GPU discovery.
//
// # Who may be a child
//
// The child is this very program (/proc/self/exe: the binary running now,
// even if its file was replaced or deleted since), started by a Supervisor,
// and only a program that serves children: one that called Serve (the
// flagshim CLI does, in cli.Run; a Go program selecting FLAGOS_PROBE=isolated
// calls flagshim.ServeProbeChild first in main). A Supervisor in a process
// that never called Serve refuses to start children (ErrNoChildService):
// re-executing an arbitrary host would run its code twice. Serve acts only
// when three facts agree: the variable FLAGSHIM_PROBE_CHILD holds a token,
// file descriptors 3 and 4 are pipes, and the request the supervisor wrote
// to fd 4 before starting the child begins with that same token. A token
// inherited through the environment alone (a careless script, a host that
// exported it) meets no request and is ignored and removed; the C shared
// library never calls Serve at all.
//
// # The protocol
//
// The supervisor writes "<token> <vendor>[ trace]\n" to
// the request pipe (fd 4) and closes it, then starts the child with the
// answer pipe as fd 3 and its stderr on a pipe of its own. The child loads
// that one vendor's driver exactly and writes, one line each, "step <C
// function>" before each call of the load, then "facts <JSON of
// tier.Facts>", and exits. Asked to trace (FLAGOS_TRACE), it also writes
// "trace <JSON>" for each C call it makes (library, function, arguments,
// result, duration in ns, as clib's tracer logs them), which the
// supervisor logs to Config.Trace with the child's vendor. FLAGOS_PROBE_TIMEOUT bounds the whole exchange,
// whatever the child does with its pipes: past it the child is killed and
// the vendor is "not available: timed out", naming the last step (where
// its driver hung). A line longer than MaxLine, an unknown line, or facts
// that fail tier.Facts.Check are "the probe child broke its protocol"; a
// child that dies first is reported with its signal or exit status, even
// when a process its driver spawned still holds its pipes. What a child
// wrote before its exit is read whole, however late the readers run on a
// loaded machine, within the same timeout (drain.go): its pipes are done
// once their reader waits on an empty pipe, not after a fixed grace.
//
// The answer is taken as soon as the facts line arrives: the child's exit
// (a driver's teardown: about 55 ms after cuInit on an H200) is not waited
// for. Children are reaped in the background; Wait lets a program that
// exits right after Init wait for them (the CLI does).
package isolated
