// Package onecpu keeps a process on one CPU: every thread it has, and so
// every thread they start, may run only on the CPU the caller runs on.
//
// It exists for the short-lived processes that initialize a GPU driver and
// exit: the flagshim command in the exact tier, and the isolated probe's
// child. On an H200 the exit of a process that initialized CUDA takes
// longer for every CPU the process ran on (about 1.5-2 ms each: the
// driver's teardown reaches each of them; the count of threads does not
// matter once they share one CPU), and a Go program runs on several CPUs
// from its start. scripts/proc-split.py measures it: a C program with five
// idle threads exits about 10 ms later than without them, the same program
// on one CPU does not; a Go program on one CPU exits as the C one does.
//
// A library never calls it on its host's behalf: it changes the whole
// process, for the rest of its life.
package onecpu
