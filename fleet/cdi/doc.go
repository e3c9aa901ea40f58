// Package cdi writes and checks Container Device Interface specs (CDI, the
// CNCF specification containerd, CRI-O, podman and Docker read to inject
// devices into containers) from what flagshim knows of each vendor: its
// driver.Vendor (control nodes, each device's nodes, libraries, the
// visible-devices variable that takes UUIDs: driver.Container) and the
// answer of a probe tier (the library found, each device's UUID and PCI bus
// id).
//
// A spec's kind is "flagos.ai/<device type>" (flagos.ai/cuda); its devices
// are named by visible index ("0"), by UUID ("GPU-8a1f...") and "all". The
// spec's own edits carry the control nodes and the libraries (each real
// file and its soname links, read-only at the same path), which a runtime
// applies once whichever devices a container gets; each device's edits
// carry its nodes and the visible-devices variable naming it by UUID (a
// host index means nothing in a container). The cdiVersion is the lowest
// that expresses the spec (MinimumVersion), so that older runtimes (podman
// 4.3 reads up to 0.5.0) resolve it.
//
// Generate makes a spec, Encode writes it as YAML or JSON (YAML written
// here: the module adds no YAML library), WriteFile writes a file
// atomically, Parse reads a spec as the CNCF library does, and Diff says
// what changed between a spec on disk and the machine now, one line per
// difference (`flagshim cdi check`). The CLI's `flagshim cdi generate` and
// `flagshim cdi check` are built on it; docs/kubernetes.md deploys them.
package cdi
