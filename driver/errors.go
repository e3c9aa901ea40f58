package driver

import (
	"errors"
	"strings"

	"github.com/flagos-ai/flagshim/clib"
	"github.com/flagos-ai/flagshim/device"
)

// Errors of drivers that a vendor-neutral program rarely needs but a
// diagnostic one does; test them with errors.Is. The common ones are
// device's: device.ErrNotAvailable, device.ErrInvalidIndex,
// device.ErrOutOfMemory, ...
var (
	ErrNoDevice       = errors.New("driver: no device")                // *_ERROR_NO_DEVICE, or zero devices
	ErrStubLibrary    = errors.New("driver: stub library")             // the toolkit's link-time stub, not the driver
	ErrDriverMismatch = errors.New("driver: driver mismatch")          // the kernel module and the library do not match
	ErrNotInitialized = errors.New("driver: not initialized")          // *_ERROR_NOT_INITIALIZED, *_ERROR_DEINITIALIZED
	ErrInvalidContext = errors.New("driver: invalid context")          // *_ERROR_INVALID_CONTEXT
	ErrTimedOut       = errors.New("driver: init timed out")           // the driver's init did not return in time
	ErrTooManyDevices = errors.New("driver: implausible device count") // more devices than MaxDevices
	// ErrPanic: code of the vendor's description (its presence sources, an
	// adapter) or the driver's load panicked; the message has the panic's
	// value. The backend, or the call, is not available: the panic never
	// reaches the host.
	ErrPanic = errors.New("driver: the vendor's code panicked")
	// ErrImplausible: the driver answered a value that breaks an
	// invariant (more memory free than there is).
	ErrImplausible = errors.New("driver: implausible value from the driver")

	// The loader's errors, for errors.Is on a backend's unavailable error.
	ErrLibraryNotFound = clib.ErrNotFound         // no candidate could be opened
	ErrRelativePath    = clib.ErrRelativeOverride // an override variable holding a relative path
	ErrUnsafeLibrary   = clib.ErrUnsafePath       // a library others can write, refused
	ErrMissingSymbol   = clib.ErrMissingSymbol    // a required function the library lacks
)

// MaxDevices is the most devices a backend accepts from a driver. A driver
// answering more is broken (or hostile): the backend is not available, and
// nothing is allocated per claimed device before the count is checked.
const MaxDevices = device.MaxDevices

// bare is err's message without a driver *clib.Error's library and function, for
// messages that already start with it.
func bare(err error) string {
	var e *clib.Error
	if errors.As(err, &e) && e == err {
		return e.Detail()
	}
	return err.Error()
}

// unavailable is the error of every call on a backend that cannot run work.
// It matches device.ErrNotAvailable and its cause. note, when set, is a
// sentence appended to the reason (see WithUnavailableNote).
type unavailable struct {
	reason string
	cause  error
	note   string
}

func (u *unavailable) Error() string {
	if u.note == "" {
		return u.reason
	}
	return sentence(u.reason) + " " + sentence(upperFirst(u.note))
}

func (u *unavailable) Unwrap() []error {
	if u.cause == nil {
		return []error{device.ErrNotAvailable}
	}
	return []error{device.ErrNotAvailable, u.cause}
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
