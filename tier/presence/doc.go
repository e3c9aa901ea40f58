// Package presence holds the vendor-neutral parts of flagshim's presence
// probe tier (FLAGOS_PROBE=presence): "which devices of a vendor are here?"
// answered without initializing any driver in the calling process.
//
// Why: a process that has initialized CUDA (cuInit) and then forks leaves a
// child in which CUDA is broken; the same holds for the other vendors'
// runtimes. That is why PyTorch counts devices through NVML when
// PYTORCH_NVML_BASED_CUDA_CHECK is set. The presence tier asks only the
// vendors' management libraries and facts that need no init, and never
// falls back to an init: when a source cannot answer, its Report says why,
// and the caller chooses another tier (FLAGOS_PROBE=isolated asks a child
// process).
//
// Each vendor package binds its own sources on these parts (drivers/cuda:
// NVML and /dev/nvidia*; drivers/musa: MTML and /dev/mtgpu.*; drivers/hip:
// the KFD topology and the render nodes; a vendor without a management
// library names only its device nodes) and lists them in its
// driver.Vendor's Presence; the driver core composes their Reports into the
// tier's answer (driver.WithPresence). This package gives them:
//
//   - Report and Device, the answer of one source, with Guard (no source
//     panics its caller) and CheckCount (a count above device.MaxDevices is
//     refused before anything is allocated for it);
//   - Env, what a source reads: the environment (telling unset from
//     empty), the root under which /dev and /sys are read (WithRoot, for
//     tests and FLAGOS_TEST_ROOT), the logger, and Env.Open, which opens a
//     management library through the binding kit (clib) and says in the
//     Report what was tried and which override to set;
//   - Query, the flow of every handle-based management library written
//     once (open, resolve the symbol table, init, the versions, the
//     count, each device, shutdown, the visibility rules), run on a
//     Management: the parts of one vendor's library that differ;
//   - Nodes and NodesOf: counting a vendor's device nodes (a NodeSpec), the
//     fallback where no management library answers: a node says a device
//     is attached, not that its runtime works;
//   - the visibility rules, one parser for every dialect a runtime reads:
//     Visible (CUDA_VISIBLE_DEVICES as PyTorch reads it), VisibleROCR and
//     VisibleCLR (ROCm's two stages), with the sources each follows;
//   - sysfs helpers (Numbered, ReadAttr, DriverOf, IsCharDevice).
//
// A source opens, asks and shuts down: nothing is kept between calls (the
// dynamic loader keeps an opened library mapped, as it always does), calls
// are safe for concurrent use, and none panics. tier/presence/presencetest is
// the test kit for a vendor's management-library binding.
package presence
