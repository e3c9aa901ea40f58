package cuda

import "github.com/flagos-ai/flagshim/visible"

// DeviceOrderEnv orders CUDA's devices: FASTEST_FIRST (the default) or
// PCI_BUS_ID.
const DeviceOrderEnv = "CUDA_DEVICE_ORDER"

// Visibility is how CUDA reads CUDA_VISIBLE_DEVICES and
// CUDA_DEVICE_ORDER; docs/visible-devices.md gives the table.
//
//   - CUDA_VISIBLE_DEVICES: NVIDIA's CUDA programming guide, appendix
//     "CUDA Environment Variables" (13.x: unset shows every GPU, empty
//     none; indexes in nvidia-smi's numbering, UUIDs as nvidia-smi -L
//     writes them and unique prefixes of them; "only devices with indices
//     that appear before the invalid index in the list are visible";
//     MIG-<UUID> for a MIG instance, "only single MIG instance enumeration
//     is supported"), read as PyTorch's NVML-based count reads it where
//     the guide is silent (torch/cuda/__init__.py: an index read like
//     strtoul, a repeated device empties the list, an ambiguous prefix
//     ends it): visible.CUDA.
//   - MIG: NVIDIA's MIG user guide, "CUDA Device Enumeration": "CUDA can
//     only enumerate a single compute instance" and "will not enumerate
//     non-MIG GPU if any compute instance is enumerated on any other GPU".
//     NVML lists the instances (nvml.go), so the presence tier resolves
//     MIG UUIDs.
//   - CUDA_DEVICE_ORDER: the programming guide's table: "FASTEST_FIRST,
//     PCI_BUS_ID, (default is FASTEST_FIRST)"; "FASTEST_FIRST causes CUDA
//     to enumerate the available devices in fastest to slowest order using
//     a simple heuristic. PCI_BUS_ID orders devices by PCI bus ID in
//     ascending order." The heuristic is not published: among GPUs of one
//     model flagshim takes PCI order, as PyTorch does; among GPUs of
//     different models the order is undecidable (visible.FastestFirst).
//     Another value is not documented: undecidable where it matters.
//     NVML's own order is not promised to be PCI order (nvml.h:
//     "The order in which NVML enumerates devices has no guarantees of
//     consistency between reboots"), so the rules sort by bus id
//     themselves.
var Visibility = &visible.Rules{
	Runtime: "CUDA",
	Stages: []visible.Stage{{
		Vars:    []visible.Var{{Name: VisibleDevicesEnv}},
		Dialect: visible.CUDA{UUIDPrefix: "GPU-", MIG: true},
	}},
	Order: &visible.Order{
		Var:     DeviceOrderEnv,
		Values:  map[string]visible.OrderKind{"FASTEST_FIRST": visible.FastestFirst, "PCI_BUS_ID": visible.PCIBusOrder},
		Default: visible.FastestFirst,
		Other:   visible.UnknownOrder,
	},
}
