// Command flagshim-acme is the flagshim command with the acme example
// backend linked in: the same info, list, resolve, explain, version and
// help, and `info --json` and `list` show an "acme" backend and probe. It
// shows how a vendor ships flagshim's CLI with its own backend: a blank
// import of the backend's package and cli.Run, in a three-line main.
//
//	ACME_DEVICES=2 FLAGOS_BACKEND=acme flagshim-acme resolve cuda:1   # flagos:1 without CUDA
//	ACME_DEVICES=2 FLAGOS_BACKEND=acme flagshim-acme list             # acme:0, acme:1, flagos:0 -> acme:0, ...
package main
