// Package vendorstest builds the fake libraries of this module's vendors and
// management libraries, for the tests of packages other than the vendor's
// own (the CLI, the C library, the root package, the isolated tier). It
// adds no route of its own: a vendor's fake is what its own tests build
// through the conformance kit (drivertest.Suite on its Vendor: the
// package's testdata/fake_<Library.Name>.c, built as its first soname), a
// management library's what presencetest.Lib builds.
// The module's sources are found from the test's working folder (its
// package's folder), so it serves this module's own tests only. For tests
// only.
package vendorstest
