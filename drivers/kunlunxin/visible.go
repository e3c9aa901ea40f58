package kunlunxin

import "github.com/flagos-ai/flagshim/visible"

// The variables Kunlunxin's stacks select devices with besides
// XPU_VISIBLE_DEVICES.
const (
	// LinkVisibleDevicesEnv is read before XPU_VISIBLE_DEVICES by Paddle
	// ("priority XPULINK_VISIBLE_DEVICES > XPU_VISIBLE_DEVICES >
	// CUDA_VISIBLE_DEVICES", PaddlePaddle/Paddle
	// python/paddle/distributed/utils/process_utils.py _get_xpu_device;
	// python/paddle/distributed/launch/context/device.py parses it as the
	// XPU list). How XRE applies it is not public.
	LinkVisibleDevicesEnv = "XPULINK_VISIBLE_DEVICES"
	// deviceOrderEnv=OAM_ID orders XPUs by OAM id in Kunlunxin's recipes
	// (process_utils.py reads xpu-smi's OAM topology then): an order the
	// presence tier cannot reproduce from XPUML.
	deviceOrderEnv = "CUDA_DEVICE_ORDER"
)

// Visibility is what can be decided of XRE's variables:
// XPU_VISIBLE_DEVICES as lists of indexes (Paddle's GetDeviceCountImpl,
// paddle/phi/backends/xpu/xpu_info.cc, counts no XPU for a value of
// nothing but spaces and otherwise asks xpu_device_count, so XRE applies
// it; vLLM-Kunlun sets such lists per worker), nothing else decided
// (visible.Ordinals); XPULINK_VISIBLE_DEVICES, read first, undecidable;
// CUDA_DEVICE_ORDER=OAM_ID undecidable where the order matters. XPUML's
// index order is taken to be XRE's.
var Visibility = &visible.Rules{
	Runtime: "XRE",
	Stages: []visible.Stage{{
		Vars: []visible.Var{
			{Name: LinkVisibleDevicesEnv, Unknown: "Paddle reads it before " + VisibleDevicesEnv + ", and how XRE applies it is not public"},
			{Name: VisibleDevicesEnv},
		},
		Dialect: visible.Ordinals{EmptyHides: true, Source: "Paddle and vLLM-Kunlun"},
	}},
	Order: &visible.Order{
		Var:     deviceOrderEnv,
		Values:  map[string]visible.OrderKind{"OAM_ID": visible.UnknownOrder},
		Default: visible.SourceOrder,
		Other:   visible.SourceOrder,
	},
}
