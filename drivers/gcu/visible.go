package gcu

import "github.com/flagos-ai/flagshim/visible"

// Visibility is how the TOPS runtime reads TOPS_VISIBLE_DEVICES, from the
// parser Enflame's torch_gcu keeps (torch_gcu/gcu/__init__.py,
// _parse_visible_devices, _transform_uuid_to_ordinals, _device_count_efml,
// © Enflame, as mirrored in sunnygui-L/torch-gcu @f17a922): PyTorch's
// CUDA_VISIBLE_DEVICES parser with "GCU-" for "GPU-" (indexes read like
// strtoul, UUID prefixes matched against efmlDeviceGetUUID's answers, a
// "MIG-" value left to the runtime). The gcushare device plugin also sets
// it to DRS-<instance UUID>, a partition of one GCU that neither EFML nor
// the device nodes describe (EnflameTechnology/gcushare
// gcushare-device-plugin/pkg/server/server.go): undecidable. The UUIDs
// flagshim reads come from EfmlGetDevUuid, whose form is not confirmed to
// be "GCU-...": a "GCU-" list is decided only where they are in that form.
// ENFLAME_VISIBLE_DEVICES is the container toolkit's: not part of the
// rules.
var Visibility = &visible.Rules{
	Runtime: "TOPS",
	Stages: []visible.Stage{{
		Vars:    []visible.Var{{Name: VisibleDevicesEnv}},
		Dialect: visible.CUDA{UUIDPrefix: "GCU-", Undecidable: []string{"DRS-"}},
	}},
}
