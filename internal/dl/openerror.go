package dl

import (
	"errors"
	"fmt"
	"strings"
)

// Failure is what a search that opened nothing found. It wraps one of the
// sentinels (ErrNotFound, ErrRelativeOverride, ErrUnsafePath, ErrStubPath,
// ErrBadELF, ErrOpen, ErrNotLoaded) and, where there is one, the cause.
// It is not an error type of its own: Open, Find and Loaded return an error
// carrying it (FailureOf reads it back), and the binding kit makes that
// clib.OpenError, the one error type callers match.
type Failure struct {
	Name     string    // Spec.Name
	EnvVar   string    // Spec.EnvVar
	Soname   string    // Spec.Sonames[0], the file the advice names; "" for none
	Override string    // the override's value; "" when unset
	Attempts []Attempt // every candidate, in order
	Err      error     // the sentinel
	Cause    error     // the underlying error, if any
}

// openError is the error of Open, Find and Loaded: a Failure.
type openError struct{ Failure }

// FailureOf is the Failure that err (Open's, Find's or Loaded's) carries;
// ok is false when err carries none.
func FailureOf(err error) (f Failure, ok bool) {
	var oe *openError
	if !errors.As(err, &oe) {
		return Failure{}, false
	}
	return oe.Failure, true
}

func (e *openError) Error() string { return e.Message() }

// Message is the error's text: what was tried and what to do.
func (e *Failure) Message() string {
	var b strings.Builder
	if e.Override != "" {
		fmt.Fprintf(&b, "%s: %s=%q: ", e.Name, e.EnvVar, e.Override)
		switch {
		case errors.Is(e.Err, ErrRelativeOverride):
			fmt.Fprintf(&b, "the path must be absolute (relative paths and the working directory are never searched); set %s=/abs/path/to/%s", e.EnvVar, e.libFile())
		case e.Cause != nil:
			fmt.Fprintf(&b, "%v; fix the file or unset %s to search the usual places", e.Cause, e.EnvVar)
		default:
			fmt.Fprintf(&b, "%v", e.Err)
		}
		return b.String()
	}
	if errors.Is(e.Err, ErrNotLoaded) || (len(e.Attempts) > 0 && e.Attempts[0].From == FromLoaded) {
		fmt.Fprintf(&b, "%s: no usable copy already loaded in this process; looked for", e.Name)
		e.writeAttempts(&b)
		b.WriteString(" (nothing was loaded). Open it first, or let the host program load it")
		return b.String()
	}
	fmt.Fprintf(&b, "%s not found; tried", e.Name)
	e.writeAttempts(&b)
	b.WriteString(". Install the driver, add its folder to LD_LIBRARY_PATH")
	if e.EnvVar != "" {
		fmt.Fprintf(&b, ", or set %s=/abs/path/to/%s", e.EnvVar, e.libFile())
	}
	return b.String()
}

// writeAttempts lists the candidates in order; consecutive candidates that
// failed for the same reason (every soname missing from the same folders)
// share one parenthesis, so the message says each reason once.
func (e *Failure) writeAttempts(b *strings.Builder) {
	if len(e.Attempts) == 0 {
		b.WriteString(" nothing")
	}
	for i := 0; i < len(e.Attempts); {
		j := i + 1
		for j < len(e.Attempts) && e.Attempts[j].Message() == e.Attempts[i].Message() {
			j++
		}
		if i > 0 {
			b.WriteString(";")
		}
		paths := make([]string, 0, j-i)
		for _, a := range e.Attempts[i:j] {
			paths = append(paths, a.Path)
		}
		fmt.Fprintf(b, " %s (%s)", strings.Join(paths, ", "), e.Attempts[i].Message())
		i = j
	}
}

// libFile is the file name the advice's example path ends in.
func (e *Failure) libFile() string {
	if e.Soname != "" {
		return e.Soname
	}
	return e.Name + ".so"
}

// Unwrap gives the sentinel and the cause.
func (e *openError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// sentinelOf is the sentinel a candidate's error wraps, ErrOpen by default.
func sentinelOf(err error) error {
	for _, s := range []error{ErrUnsafePath, ErrStubPath, ErrBadELF, ErrRelativePath, ErrNotLoaded} {
		if errors.Is(err, s) {
			return s
		}
	}
	return ErrOpen
}
