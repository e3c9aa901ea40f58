package hip

import "github.com/flagos-ai/flagshim/visible"

// Visibility is how the ROCm runtimes read their variables, in the order
// they apply them (docs/visible-devices.md gives the table):
//
//   - ROCR_VISIBLE_DEVICES first, by ROCr over every GPU it finds
//     (ROCR-Runtime src/core/runtime/amd_filter_device.cpp, RvdFilter:
//     visible.ROCR);
//   - then HIP's CLR over the devices ROCr left: HIP_VISIBLE_DEVICES, or
//     CUDA_VISIBLE_DEVICES where it is unset or empty
//     (clr rocclr/device/rocm/rocdevice.cpp: visible.CLR). ROCm's "GPU
//     isolation techniques" page describes the same two levels.
//
// KFD's node order is ROCr's device order (both walk the topology's GPU
// nodes), so no order variable applies. Select writes ROCR_VISIBLE_DEVICES
// (UUIDs where KFD gives them) and HIP_VISIBLE_DEVICES keeping all of
// ROCr's, so that a CUDA_VISIBLE_DEVICES the child inherits changes
// nothing.
var Visibility = &visible.Rules{
	Runtime: "ROCm",
	Stages: []visible.Stage{
		{Vars: []visible.Var{{Name: ROCRVisibleDevicesEnv}}, Dialect: visible.ROCR{}},
		{Vars: []visible.Var{{Name: VisibleDevicesEnv, EmptyIsUnset: true}, {Name: CUDAVisibleDevicesEnv, EmptyIsUnset: true, Foreign: true}},
			Dialect: visible.CLR{}},
	},
}
