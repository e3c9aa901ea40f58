// Package report is the model of what flagshim found on a machine and
// decided: every backend with its probe answer, library, driver version,
// devices and the tier that answered; every probe, original and live, and
// who redirected it; the cuda->flagos decision; Init's phases; every
// environment variable flagshim reads. Collect gathers it after
// flagshim.Init; the CLI renders it (info, list, explain), the C library's
// flagshim_info_json marshals it, and Python's flagshim.info() reads that
// JSON. Its JSON form is documented field by field in docs/json.md and
// carries "schema_version" first: keys are only ever added.
package report
