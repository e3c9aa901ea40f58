package cli

import (
	"errors"
	"fmt"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/internal/logging"
	"github.com/flagos-ai/flagshim/report"
)

// checkSettings checks, before Init, the variables whose parsers the CLI can
// reach: FLAGOS_LOG (also when -v sets the level, so that a bad value is an
// error whatever the flags) and FLAGOS_ALIAS_CUDA. Init checks every
// variable and wraps flagshim.ErrBadSetting; checking here too makes the rule
// the same for every command, however far each one would get. The error
// wraps flagshim.ErrBadSetting.
func checkSettings(lookup func(string) (string, bool)) error {
	var errs []error
	v, _ := lookup(logging.EnvVar)
	if _, _, err := logging.ParseLevel(v); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", flagshim.ErrBadSetting, err))
	}
	v, _ = lookup(alias.EnvVar)
	if _, err := alias.ParseEnv(v); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", flagshim.ErrBadSetting, err))
	}
	return errors.Join(errs...)
}

// badSettings is report.BadSettings: the bad settings within err.
func badSettings(err error) []error { return report.BadSettings(err) }

// settingError is a bad setting as every host prints it (report.SettingError).
type settingError = report.SettingError

// settingMessage is report.SettingMessage.
func settingMessage(msg string) string { return report.SettingMessage(msg) }
