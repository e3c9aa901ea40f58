package device

import (
	"errors"
	"fmt"
	"strings"
)

// Errors of Parse and Lookup; test them with errors.Is.
var (
	ErrSyntax      = errors.New("device: invalid device string")
	ErrUnknownType = errors.New("device: unknown device type")
)

// maxIndex is the largest device index a device string may carry (2^31-1).
const maxIndex = 1<<31 - 1

// split checks the syntax "type" or "type:index" and returns its parts.
// index is -1 when none is given. Leading zeros of the index are accepted,
// however many ("cuda:01", "cuda:00000000001"): the bound 2^31-1 applies to
// the significant digits, so two spellings of one index are accepted or
// refused alike. It never allocates.
func split(s string) (typ string, index int, ok bool) {
	typ, num, hasIndex := strings.Cut(s, ":")
	if !validTypeName(typ) {
		return "", 0, false
	}
	if !hasIndex {
		return typ, -1, true
	}
	if num == "" {
		return "", 0, false
	}
	sig := strings.TrimLeft(num, "0") // "" for "0", "000": index 0
	if len(sig) > maxIndexDigits {
		return "", 0, false // out of range, or not a number at all
	}
	var n uint64 // 10 digits overflow a 32-bit int, never a uint64
	for i := 0; i < len(sig); i++ {
		c := sig[i]
		if c < '0' || c > '9' {
			return "", 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > maxIndex {
		return "", 0, false
	}
	return typ, int(n), true
}

// maxIndexDigits is the number of decimal digits of maxIndex.
const maxIndexDigits = 10

// validTypeName reports whether s is a lowercase type name:
// a letter, then letters, digits or '_'.
func validTypeName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// ValidType reports whether t is spelled as a type name may be.
func ValidType(t Type) bool { return validTypeName(string(t)) }

func syntaxError(s string, known []Type) error {
	return fmt.Errorf("%w %q: want \"type\" or \"type:index\" with a lowercase registered type and a decimal index 0..%d (known types: %s)",
		ErrSyntax, s, maxIndex, joinTypes(known))
}

func unknownTypeError(s string, t Type, known []Type) error {
	return fmt.Errorf("%w %q in %q (known types: %s)", ErrUnknownType, t, s, joinTypes(known))
}

func joinTypes(ts []Type) string {
	if len(ts) == 0 {
		return "none registered"
	}
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(t))
	}
	return b.String()
}
