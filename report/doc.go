// Package report is the model of what flagshim found on a machine and
// decided: every backend with its probe answer, library, driver version,
// devices and the tier that answered; every probe, original and live, and
// who redirected it; the cuda->flagos decision; Init's phases; every
// environment variable flagshim reads. Collect gathers it after
// flagshim.Init; the CLI renders it (info, list, explain), the C library's
// flagshim_info_json marshals it, and Python's flagshim.info() reads that
// JSON. Its JSON form is documented field by field in docs/json.md and
// carries "schema_version" first: within a version keys are only ever
// added. It says each fact once (once.go), and starts with a one-line
// verdict that names the tier that answered and who chose it, so that hosts
// with different default tiers say why their answers differ. Settings gives
// a bad setting as every host reports it.
package report
