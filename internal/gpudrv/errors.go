package gpudrv

import (
	"strconv"
	"strings"
)

// Error is a result code of the driver API other than success.
type Error struct {
	Code    int    // the CUresult / MUresult
	Name    string // "CUDA_ERROR_NO_DEVICE"
	Message string // the driver's own words (cuGetErrorString); may be ""

	v *Vendor
}

// Error reads like "cuda: CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device
// is detected".
func (e *Error) Error() string {
	pkg := "driver"
	if e.v != nil {
		pkg = e.v.Pkg
	}
	return pkg + ": " + e.detail()
}

// detail is the message without the package prefix:
// "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected".
func (e *Error) detail() string {
	s := e.Name + " (" + strconv.Itoa(e.Code) + ")"
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// bare is err's message without a driver *Error's package prefix, for
// messages that already start with it.
func bare(err error) string {
	if e, ok := err.(*Error); ok {
		return e.detail()
	}
	return err.Error()
}

// Is reports whether the code falls under target, one of the vendor's
// sentinels (errors.Is(err, cuda.ErrNoDevice) for code 100), or is an *Error
// of the same vendor with the same code.
func (e *Error) Is(target error) bool {
	if t, ok := target.(*Error); ok {
		return t.Code == e.Code && t.v == e.v
	}
	if e.v == nil || e.v.Errors == nil {
		return false
	}
	s := e.v.Errors
	switch target {
	case s.NotAvailable:
		return notUsableAtInit(e.Code)
	case s.NoDevice:
		return e.Code == resultNoDevice
	case s.StubLibrary:
		return e.Code == resultStubLibrary
	case s.InvalidDevice:
		return e.Code == resultInvalidDevice
	case s.NotFound:
		return e.Code == resultNotFound
	case s.NotSupported:
		return e.Code == resultNotSupported
	case s.DriverMismatch:
		return e.Code == resultInsufficientDriver || e.Code == resultSystemDriverMismatch || e.Code == resultCompatNotSupportedOnDevice
	case s.NotInitialized:
		return e.Code == resultNotInitialized || e.Code == resultDeinitialized
	case s.InvalidContext:
		return e.Code == resultInvalidContext
	case s.Unknown:
		return e.Code == resultUnknown
	}
	return false
}

// notUsableAtInit lists the codes that, from cuInit, mean "this machine
// cannot run work": a stub library, no device, a driver mismatch, unknown.
func notUsableAtInit(code int) bool {
	switch code {
	case resultStubLibrary, resultInsufficientDriver, resultNoDevice,
		resultSystemDriverMismatch, resultCompatNotSupportedOnDevice, resultUnknown:
		return true
	}
	return false
}

// ResultName is the name of a code with the vendor's prefix, from the table;
// "CUDA_ERROR_UNKNOWN_CODE_12345" for codes the table lacks.
func (v *Vendor) ResultName(code int) string {
	if n, ok := resultNames[code]; ok {
		return v.ErrPrefix + n
	}
	return v.ErrPrefix + "ERROR_UNKNOWN_CODE_" + strconv.Itoa(code)
}

// unavailable is the error every call returns when the backend cannot run
// work. It matches the vendor's NotAvailable and the cause. note, when set,
// is a sentence appended to the reason (see Config.UnavailableNote).
type unavailable struct {
	sentinel error
	reason   string
	cause    error
	note     string
}

func (u *unavailable) Error() string {
	if u.note == "" {
		return u.reason
	}
	return sentence(u.reason) + " " + sentence(upperFirst(u.note))
}

// sentence ends s with a full stop unless it ends with punctuation already.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsRune(".!?", rune(s[len(s)-1])) {
		return s
	}
	return s + "."
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
func (u *unavailable) Unwrap() []error {
	if u.cause == nil {
		return []error{u.sentinel}
	}
	return []error{u.sentinel, u.cause}
}
