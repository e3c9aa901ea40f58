// Command procsplit splits the whole-process cost of an exact probe into
// start-up, main and exit, so a Go process can be compared with the C floor
// (scripts/cfloor-probe.c) part by part. It writes "MONO <main start>
// <main end>" (CLOCK_MONOTONIC, ns) to stderr; scripts/proc-split.py runs
// it and the C floor interleaved and subtracts the spawn and reap times it
// sees itself.
//
//	procsplit noop      # the Go runtime alone: start-up and exit
//	procsplit raw       # dlopen libcuda, cuInit, enumerate through purego: any Go program's floor
//	procsplit cli ARGS  # the flagshim CLI (procsplit cli info), its output discarded
//
// It is a measuring tool for the GPU machine, not part of the library.
package main
