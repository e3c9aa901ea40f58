// Package gofloor is the Go floor of drivers/cuda's GPU benchmarks: the
// driver calls flagshim's hot paths make, made from Go through one cgo call
// each, the way a Go program that links the driver API with cgo makes them.
// flagshim's own calls pay the same transition into C (runtime.cgocall)
// without cgo, so its cost over this floor is what the library adds; its
// cost over scripts/cfloor.c's C loops includes what Go itself adds.
//
// The functions take the addresses of the driver's functions from the
// caller (the benchmark resolves them through flagshim's own handle, so both
// sides call the same library) and name no library: nothing links against
// the driver. Each makes a device's context current first where flagshim
// does, in the same C function. They are CUDA-shaped (cuCtxSetCurrent,
// cuLaunchKernel, cuMemcpyHtoD_v2, ... as driver/ops.go gives them).
//
// The package is built only with the build tag gpu and cgo (without them it
// is empty), and only the GPU benchmarks import it: the library stays free
// of cgo.
package gofloor
