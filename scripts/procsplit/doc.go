// Command procsplit splits the whole-process cost of an exact probe into
// start-up, main and exit, so a Go process can be compared with the C floor
// (scripts/cfloor-probe.c) part by part. It writes "MONO <main start> <main
// end> <threads>" (CLOCK_MONOTONIC, ns; the threads it has then) to stderr;
// scripts/proc-split.py runs it and the C floor interleaved and subtracts
// the spawn and reap times it sees itself.
//
//	procsplit noop        # the Go runtime alone: start-up and exit
//	procsplit raw         # dlopen libcuda, cuInit, enumerate through purego: any Go program's floor
//	procsplit raw-thread  # raw on a goroutine that ends locked, taking its thread with it
//	procsplit cli ARGS    # the flagshim CLI (procsplit cli info), its output discarded
//
// PROCSPLIT_EXIT=libc ends the process through libc's exit(3), which runs
// the libraries' destructors as C's return from main does, instead of
// os.Exit, which does not. PROCSPLIT_SHED=before or after ends the Go
// runtime's idle threads before or after the work (counted in main).
//
// It is a measuring tool for the GPU machine, not part of the library.
package main
