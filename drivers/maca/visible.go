package maca

import "github.com/flagos-ai/flagshim/visible"

// Visibility is what can be decided of the MACA runtime's variables.
// MetaX's own stack selects devices with CUDA_VISIBLE_DEVICES, as lists of
// indexes (vLLM-metax's platform.py device_control_env_var; Ray's MetaX
// accelerator manager, python/ray/_private/accelerators/metax_gpu.py); no
// MetaX source says how the runtime reads anything else, so only such
// lists are decided (visible.Ordinals). MACA_VISIBLE_DEVICES is set by
// FlagOS's and FlagScale's recipes, and whether and how the runtime applies
// it beside CUDA_VISIBLE_DEVICES is not confirmed: where it is set, the
// answer is undecidable, and a child's environment is not written.
// MXSML's index order is taken to be the runtime's (mxsml.go).
var Visibility = &visible.Rules{
	Runtime: "MACA",
	Stages: []visible.Stage{{
		Vars: []visible.Var{
			{Name: VisibleDevicesEnv, Unknown: "how the MACA runtime applies it beside " + CUDAVisibleDevicesEnv + " is not confirmed by MetaX"},
			{Name: CUDAVisibleDevicesEnv},
		},
		Dialect: visible.Ordinals{Source: "MetaX's stack (vLLM-metax, Ray's MetaX manager)"},
	}},
}
