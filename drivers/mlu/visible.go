package mlu

import "github.com/flagos-ai/flagshim/visible"

// CNVisibleDevicesEnv is the variable Cambricon's runtime reads before
// MLU_VISIBLE_DEVICES (torch_mlu's _parse_visible_devices: "Parse
// CN_VISIBLE_DEVICES/MLU_VISIBLE_DEVICES environment variable. Keep align
// with cnrt").
const CNVisibleDevicesEnv = "CN_VISIBLE_DEVICES"

// cudaVisibleDevicesEnv is CUDA's variable, which torch_mlu reads after
// Cambricon's two since its r2.4 branch.
const cudaVisibleDevicesEnv = "CUDA_VISIBLE_DEVICES"

// Visibility is how Cambricon's runtime reads its variables, from the
// parser torch_mlu keeps "align with cnrt" (Cambricon/torch_mlu
// torch_mlu/mlu/__init__.py, _parse_visible_devices and
// _transform_uuid_to_ordinals, branches r2.1_develop to r2.4_develop;
// visible.Cambricon gives the syntax): CN_VISIBLE_DEVICES first, then
// MLU_VISIBLE_DEVICES, indexes or CNDev's whole UUIDs. The r2.4 branch
// reads CUDA_VISIBLE_DEVICES after both (r2.1 does not): which CNRT
// releases do is not public, so where it is the one set the tier cannot
// decide. CNDev's index order is taken to be CNRT's (torch_mlu maps one to
// the other so).
var Visibility = &visible.Rules{
	Runtime: "CNRT",
	Stages: []visible.Stage{{
		Vars: []visible.Var{{Name: CNVisibleDevicesEnv}, {Name: VisibleDevicesEnv},
			{Name: cudaVisibleDevicesEnv, Unknown: "torch_mlu reads it after CN_VISIBLE_DEVICES and MLU_VISIBLE_DEVICES since r2.4 (not in r2.1), following CNRT releases that are not public"}},
		Dialect: visible.Cambricon{UUIDPrefix: "MLU-"},
	}},
}
