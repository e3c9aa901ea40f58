// The tests of flagshim's CDI specs and node labels against the
// ecosystem's own code: the CNCF Container Device Interface library (its
// parser, cache and injection), Kubernetes' label validation, and a real
// container runtime (podman with runc). A module of its own, so that the
// library's module does not depend on them: `cd fleet/cncftest && go test
// ./...` (.ci/run does).
module github.com/flagos-ai/flagshim/fleet/cncftest

go 1.26.0

replace github.com/flagos-ai/flagshim => ../..

require (
	github.com/flagos-ai/flagshim v0.0.0-00010101000000-000000000000
	github.com/opencontainers/runtime-spec v1.3.0
	github.com/stretchr/testify v1.12.1
	k8s.io/apimachinery v0.36.6
	tags.cncf.io/container-device-interface v1.1.2
	tags.cncf.io/container-device-interface/specs-go v1.1.1
)

require (
	github.com/ebitengine/purego v0.11.3 // indirect
	github.com/fsnotify/fsnotify v1.7.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	go.uber.org/zap v1.28.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
	k8s.io/klog/v2 v2.140.0 // indirect
	k8s.io/utils v0.0.0-20260210185600-b8788abfbbc2 // indirect
)
