package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/flagos-ai/flagshim/device"
)

// deviceOf parses s on device.Default and returns its backend and index
// (-1: the current device); a failure has its message set.
func deviceOf(s string) (device.Backend, int, failure) {
	if _, f := resolve(s); f != failNone {
		return nil, 0, f
	}
	d, err := device.Parse(s)
	if err != nil {
		setErr(err)
		return nil, 0, failDevice
	}
	b, err := device.Lookup(d.Type)
	if err != nil {
		setErr(err)
		return nil, 0, failBackend
	}
	return b, d.Index, failNone
}

// failureOf maps a backend's error to a code: no such device (not
// available, an index out of range), or a capability the backend lacks.
func failureOf(err error) failure {
	setErr(err)
	switch {
	case errors.Is(err, device.ErrNotAvailable), errors.Is(err, device.ErrInvalidIndex):
		return failNoDev
	case errors.Is(err, device.ErrNotSupported):
		return failBackend
	}
	return failNoDev
}

// deviceJSON is s's record as compact JSON (flagshim_device_json).
func deviceJSON(s string) (string, failure) {
	b, index, f := deviceOf(s)
	if f != failNone {
		return "", f
	}
	id, err := device.IdentifierOf(b)
	if err != nil {
		return "", failureOf(err)
	}
	r, err := id.Record(index)
	if err != nil {
		return "", failureOf(fmt.Errorf("%s: %w", s, err))
	}
	out, err := json.Marshal(r)
	if err != nil {
		setErr(fmt.Errorf("%s: the record cannot be written as JSON: %w", s, err))
		return "", failNoDev
	}
	return string(out), failNone
}

// memGetInfo is s's free and total memory (flagshim_mem_get_info): the
// backend's MemInfo, which in the presence tier is the management
// library's answer and in the exact tier the driver's.
func memGetInfo(s string) (free, total uint64, f failure) {
	b, index, f := deviceOf(s)
	if f != failNone {
		return 0, 0, f
	}
	m, err := device.MemoryOf(b)
	if err != nil {
		return 0, 0, failureOf(err)
	}
	free, total, err = m.MemInfo(index)
	if err != nil {
		return 0, 0, failureOf(fmt.Errorf("%s: %w", s, err))
	}
	return free, total, failNone
}
