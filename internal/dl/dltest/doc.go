// Package dltest helps tests that need real shared libraries: it builds C
// fixtures with the system compiler (`go env CC`) and re-executes the test
// binary so that loader-dependent cases run in a fresh process (a loaded
// soname stays loaded for the life of a process, and LD_LIBRARY_PATH is read
// once at start-up). It is for tests only; library code must not import it.
package dltest
