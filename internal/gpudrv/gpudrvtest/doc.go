// Package gpudrvtest is the test suite shared by drivers/cuda and
// drivers/musa: it builds the package's fake driver library and runs every
// loader-dependent case in a child process (see dltest). For tests only.
package gpudrvtest
