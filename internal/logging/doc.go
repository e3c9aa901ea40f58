// Package logging builds flagshim's zap logger from the FLAGOS_LOG
// environment variable.
//
// FLAGOS_LOG takes one of off, error, warn, info or debug; case and
// surrounding spaces are ignored. Unset, empty and off all mean no logging
// at all: [New] returns zap.NewNop(), so a library that nobody asked to log
// costs nothing and prints nothing. Any other value is an error wrapping
// [ErrBadLevel] that names the variable, the value and the accepted values.
//
// An enabled logger writes human-readable console lines to stderr with
// ISO8601 timestamps, at the chosen level and above:
//
//	2026-01-02T15:04:05.000Z	DEBUG	phases/phases.go:42	phase step	{"phase": "drivers", ...}
//
// The package is internal: flagshim calls [FromEnv] once, in Init, and
// passes the logger down.
package logging
