package gpudrv

import (
	"errors"
	"strconv"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/internal/dl"
)

// Vendor describes one driver API of the cu*/mu* family.
type Vendor struct {
	Type        device.Type // device.CUDA
	Pkg         string      // "cuda": the first word of messages
	VendorName  string      // "NVIDIA": Properties.Vendor
	SymPrefix   string      // "cu": prefix of the C symbols
	ErrPrefix   string      // "CUDA_": prefix of the result names (CUDA_ERROR_NO_DEVICE)
	VisibleEnv  string      // "CUDA_VISIBLE_DEVICES": reported, never applied (the driver does)
	UUIDPrefix  string      // "GPU-": prefix of formatted UUIDs
	VersionBase int         // 1000 for CUDA (major*1000+minor*10), 10000 for MUSA (major*10000+minor*100)
	Spec        dl.Spec     // where the library is
	Errors      *Errors     // the package's sentinels
}

// Errors are one vendor package's sentinels. An *Error matches them with
// errors.Is according to its code (see Error.Is).
type Errors struct {
	NotAvailable   error // the runtime cannot run work: no library, stub, no device, init failure
	NoDevice       error // 100, or zero devices
	StubLibrary    error // 34
	InvalidDevice  error // 101, or an index out of range
	NotFound       error // 500
	NotSupported   error // 801, or an optional symbol the library lacks
	DriverMismatch error // 35, 803, 804
	NotInitialized error // 3, 4
	InvalidContext error // 201
	Unknown        error // 999
	Unloaded       error // a module used after Unload
}

// NewErrors makes the sentinels of the package pkg ("cuda").
func NewErrors(pkg string) *Errors {
	e := func(s string) error { return errors.New(pkg + ": " + s) }
	return &Errors{
		NotAvailable:   e("not available"),
		NoDevice:       e("no device"),
		StubLibrary:    e("stub library"),
		InvalidDevice:  e("invalid device"),
		NotFound:       e("not found"),
		NotSupported:   e("not supported"),
		DriverMismatch: e("driver mismatch"),
		NotInitialized: e("not initialized"),
		InvalidContext: e("invalid context"),
		Unknown:        e("unknown error"),
		Unloaded:       e("module unloaded"),
	}
}

// DecodeVersion splits a driver version number: CUDA's 13000 (base 1000) is
// 13.0 and 12040 is 12.4; MUSA's 30100 (base 10000) is 3.1. Negative numbers
// and bases that are not a multiple of 100 give 0, 0.
func DecodeVersion(v, base int) (major, minor int) {
	if v < 0 || base < 100 || base%100 != 0 {
		return 0, 0
	}
	return v / base, v % base / (base / 100)
}

// FormatVersion is DecodeVersion as "major.minor".
func FormatVersion(v, base int) string {
	major, minor := DecodeVersion(v, base)
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}

// sym is the full C name of a symbol of this vendor: "cu" + "Init".
func (v *Vendor) sym(suffix string) string { return v.SymPrefix + suffix }
