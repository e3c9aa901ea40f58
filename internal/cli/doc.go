// Package cli is the flagshim command's implementation: info, resolve and
// explain over device.Default and probe.Default after flagshim.Init.
//
// It lives apart from cmd/flagshim so that a program which links extra
// backends (see examples/) can offer the same command with them included:
// its main calls cli.Run.
package cli
