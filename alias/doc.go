// Package alias decides whether "cuda" should mean "flagos" and installs that
// decision.
//
// The rule (docs/architecture.md, "The public contract"): the alias is active exactly when
// FLAGOS_ALIAS_CUDA allows it, the ORIGINAL cuda probe finds no usable CUDA
// runtime, and the original flagos probe finds at least one device. When
// active, device strings "cuda" and "cuda:N" parse to flagos, Lookup(cuda)
// returns the flagos backend and the live cuda probe answers for flagos
// (redirected by "alias").
//
// Decide reads only original probes. Compatibility code may redirect the live
// cuda probe to say "available" before the alias is decided (that is what it
// is for); a guard that read the live probe would then see CUDA everywhere
// and never install the alias. Reading the original makes the decision the
// same before and after any redirect, and running it twice changes nothing.
package alias
