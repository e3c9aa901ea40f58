// Package visible reads and writes the variables with which accelerator
// runtimes hide and order their devices (CUDA_VISIBLE_DEVICES and its
// kin): which devices a process started with a given environment sees, in
// which order, and the environment that makes exactly a chosen set of
// devices visible to a child process.
//
// A runtime's visibility is data, a Rules value: the stages the runtime
// applies one after the other (ROCm applies ROCR_VISIBLE_DEVICES, then
// HIP_VISIBLE_DEVICES over what ROCR left), each reading the first of its
// variables that is set, with the syntax (a Dialect) that runtime accepts,
// and, where the runtime has one, the variable that orders its devices
// (CUDA_DEVICE_ORDER). Each vendor package (drivers/<vendor>) writes its
// runtime's Rules beside the sources they come from; this package names no
// vendor's variable and holds the dialects those sources describe:
//
//   - CUDA: CUDA_VISIBLE_DEVICES as the CUDA programming guide documents it
//     and PyTorch parses it (torch/cuda/__init__.py): indexes read like
//     strtoul, UUIDs and unique UUID prefixes, MIG instances (one per
//     process), the list ending at the first entry that names no device, a
//     repeated device emptying it;
//   - ROCR and CLR: ROCm's two stages, as ROCR-Runtime's RvdFilter and
//     HIP's CLR read them;
//   - AscendRT: ASCEND_RT_VISIBLE_DEVICES as Ascend's runtime reads it
//     (ascending ids, a repeat or a list out of order hiding every NPU);
//   - Cambricon: MLU_VISIBLE_DEVICES as torch_mlu reads it in CNRT's place
//     (digits only, whole UUIDs);
//   - Ordinals: the plain lists of indexes a vendor documents, and nothing
//     else ("undecidable" for the rest, rather than a guess).
//
// Resolve answers "which devices will the runtime see?" given every device
// a source (a management library) lists; Rules.Select answers "what must
// a child's environment hold to see exactly these devices?". Where a
// runtime's behaviour is not public, both say so with ErrUndecidable
// instead of guessing. The package does no I/O: the caller gives the
// devices and a lookup of the environment.
package visible
