// Command gen writes the repeated part of a driver package of the cu*/mu*
// family (drivers/cuda, drivers/musa) from that package's hand-written
// vendor.go, x/sys style: generated files start with z and are never edited.
//
//	zdriver.go      sentinels, Error and the type aliases, Option and the
//	                With* functions, Backend and its forwarding methods
//	zfake_test.go   the fake-library tests and benchmarks (gpudrvtest)
//
// It runs in the package's folder, from vendor.go's go:generate line:
//
//	//go:generate go run ../../internal/gpudrv/gen -version 13000
//
// so go generate ./drivers/... regenerates every package. It reads from
// vendor.go the consts EnvVar and VisibleDevicesEnv, the gpudrv.Vendor
// literal (Type, Pkg, SymPrefix, ErrPrefix, VisibleEnv, VersionBase) and the
// dl.Spec literal (Name). -version is a version number as the driver
// reports it, the fake library's FAKE_DEFAULT_VERSION: the example in
// DriverVersion's doc and the version the fake tests expect.
//
// internal/gpudrv/gen's test fails when a committed z-file differs from what
// the templates (zdriver.go.tmpl, zfake_test.go.tmpl) give.
package main
