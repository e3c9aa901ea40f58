package clib

import (
	"slices"
	"strconv"
)

// Error is a C library's result code other than success: which library
// and function returned it, the code, the library's name for it and its
// own message. It matches with errors.Is the sentinels its binding gives
// the code (device.ErrOutOfMemory for CUDA_ERROR_OUT_OF_MEMORY), and any
// *Error of the same library and code.
type Error struct {
	Library string // the binding's label: "cuda", "NVML", "nvshmem"
	Func    string // the C function: "cuMemAlloc_v2"; "" when not known
	Code    int    // the result code
	Name    string // "CUDA_ERROR_OUT_OF_MEMORY"
	Message string // the library's words for it; may be ""

	is []error
}

// NewError is the *Error of code returned by function fn of library lib,
// matching the sentinels is.
func NewError(lib, fn string, code int, name, message string, is ...error) *Error {
	return &Error{Library: lib, Func: fn, Code: code, Name: name, Message: message, is: is}
}

// Error reads "cuda: cuMemAlloc_v2 returned CUDA_ERROR_OUT_OF_MEMORY (2):
// out of memory".
func (e *Error) Error() string {
	s := e.Library + ": "
	if e.Func != "" {
		s += e.Func + " returned "
	}
	return s + e.Detail()
}

// Detail is the code without the library and function: "CUDA_ERROR_NO_DEVICE
// (100): no CUDA-capable device is detected", for messages that say those
// already.
func (e *Error) Detail() string {
	name := e.Name
	if name == "" {
		name = "unknown code"
	}
	s := name + " (" + strconv.Itoa(e.Code) + ")"
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Is reports whether target is one of the code's sentinels, or an *Error of
// the same library and code.
func (e *Error) Is(target error) bool {
	if t, ok := target.(*Error); ok {
		return t.Code == e.Code && t.Library == e.Library
	}
	return slices.Contains(e.is, target)
}

// Codes is what a library's result codes mean, for bindings whose codes
// are a fixed table (management libraries, NVSHMEM). Success is 0.
type Codes struct {
	Library string          // the label of its errors: "NVML"
	Names   map[int]string  // each code's name
	Is      map[int][]error // the sentinels each code matches
	Always  []error         // the sentinels every code matches (a binding's ErrCall)
	// Message, when set, gives the library's own words for a code
	// (nvmlErrorString).
	Message func(code int) string
}

// Check is nil for 0, else the *Error of code returned by fn.
func (c *Codes) Check(fn string, code int) error {
	if code == 0 {
		return nil
	}
	return c.Err(fn, code)
}

// Err is the *Error of code returned by fn.
func (c *Codes) Err(fn string, code int) *Error {
	e := &Error{Library: c.Library, Func: fn, Code: code, Name: c.Names[code], is: append(slices.Clip(c.Is[code]), c.Always...)}
	if c.Message != nil {
		e.Message = c.Message(code)
	}
	return e
}
