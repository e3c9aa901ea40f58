// Command flagshim-acme is the flagshim command with the acme example
// backend linked in: the same info, resolve and explain, and `info --json`
// lists an "acme" backend and probe. It shows how a vendor ships flagshim's
// CLI with its own backend: a blank import of the backend's package and
// cli.Run.
//
//	ACME_DEVICES=2 FLAGOS_BACKEND=acme flagshim-acme resolve cuda:1   # flagos:1 without CUDA
package main
