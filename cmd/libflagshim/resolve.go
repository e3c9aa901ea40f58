package main

import (
	"context"
	"errors"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
)

// failure says why a call gave no answer; export.go maps it to the C codes
// of flagshim.h.
type failure int

const (
	failNone   failure = iota
	failInit           // FLAGSHIM_EINIT
	failArgs           // FLAGSHIM_EINVAL
	failDevice         // FLAGSHIM_EDEVICE
	failRange          // FLAGSHIM_ERANGE
)

// resolve parses s on device.Default, which runs flagshim.Init first.
func resolve(s string) (string, failure) {
	d, err := device.Parse(s)
	switch {
	case err == nil:
		return d.String(), failNone
	case errors.Is(err, device.ErrSyntax), errors.Is(err, device.ErrUnknownType):
		return "", failDevice
	default: // device.Default could not be initialised: the alias is undecided
		return "", failInit
	}
}

// aliasActive runs flagshim.Init and says whether cuda means flagos. Errors
// of other steps do not count: only an undecided alias is a failure, and
// device.Default reports exactly that.
func aliasActive() (bool, failure) {
	rep, _ := flagshim.Init(context.Background())
	if _, err := device.Lookup(device.CPU); err != nil || rep == nil {
		return false, failInit
	}
	return rep.Alias.Active, failNone
}

// put writes s and a NUL into out when they fit. On failure it writes an
// empty string, if out has room for one, and nothing else.
func put(out []byte, s string) (int, failure) {
	if len(out) == 0 {
		return 0, failArgs
	}
	if len(s)+1 > len(out) {
		out[0] = 0
		return 0, failRange
	}
	copy(out, s)
	out[len(s)] = 0
	return len(s), failNone
}
