// Command flagshim-acme is the flagshim command with the acme example
// vendor linked in: the same info, list, resolve, explain, version and
// help, and every command shows an "acme" backend and probe, in every probe
// tier (it is its own isolated probe child, acme included). It shows how a
// vendor ships flagshim's CLI with its own backend: a blank import of the
// vendor's package and cli.Run, in a three-line main.
//
//	FLAGOS_BACKEND=acme flagshim-acme resolve cuda:1   # flagos:1 without CUDA
//	FLAGOS_BACKEND=acme flagshim-acme list             # acme:0, acme:1, flagos:0 -> acme:0, ...
package main
