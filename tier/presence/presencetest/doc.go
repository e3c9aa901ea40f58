// Package presencetest is a test kit for management-library bindings of the
// presence tier (drivers/cuda's NVML, drivers/musa's MTML, and those of
// vendor packages outside this module): it builds a binding's fake library
// from C with the system compiler (`go env CC`) and runs each scenario in a
// child process of the test binary, since a loaded soname stays loaded for
// the life of a process (see internal/dl/dltest). A [Suite] names the fake
// ([Lib]), the binding under test and its cases; [Suite.Test], called from
// one top-level test, starts every case as a child of that same test and,
// in the child, runs the case the environment names. [Common] is the table
// of cases every binding on presence.Query is tested for alike, filled with
// the facts of the binding and its fake; a binding adds its own Cases.
//
// It also has what such tests share: a fake filesystem root for /dev and
// /sys ([Tree]), a fixed environment ([Lookup]), the fake's call log
// ([Calls], [Paired]), the tripwire libcuda that proves no source loads a
// driver ([Tripwire], [NoDriverLoaded]), and the checks of the device-count
// bound ([TooMany], [Allocated]).
//
// It is public so that vendor packages outside this module can test their
// bindings the same way. It is for tests only; library code must not import
// it.
package presencetest
