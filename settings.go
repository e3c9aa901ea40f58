package flagshim

import "errors"

// ErrBadSetting is wrapped by Init's error for every environment variable
// whose value flagshim does not accept: FLAGOS_ALIAS_CUDA, FLAGOS_BACKEND,
// FLAGOS_LOG, FLAGOS_PROBE, FLAGOS_PROBE_TIMEOUT, and a FLAGOS_LIB*_PATH that
// is not an absolute path. The message names the variable, its value and
// the accepted values. A program can tell a user's mistake, which it should
// report and stop on, from a fact of the machine (a driver library that is
// missing or failed to load), which Init reports too:
//
//	if _, err := flagshim.Init(ctx); errors.Is(err, flagshim.ErrBadSetting) {
//		log.Fatal(err)
//	}
var ErrBadSetting = errors.New("flagshim: invalid setting")
