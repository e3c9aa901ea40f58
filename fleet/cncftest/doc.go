// Package cncftest tests flagshim's CDI specs and node labels with the
// ecosystem's own code: tags.cncf.io/container-device-interface loads each
// spec flagshim writes with its parser and cache and resolves every device
// into an OCI spec; k8s.io/apimachinery's validation judges every label
// (the rules nfd-master applies); podman with runc runs a container with
// the devices of a generated spec (podman_test.go). It is a module of its
// own so that flagshim's module does not depend on them.
package cncftest
