package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/alias"
	"github.com/flagos-ai/flagshim/internal/logging"
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

// badSettings returns the errors within err (Init's, often a join of every
// step's error) that match flagshim.ErrBadSetting, so that a command prints
// the bad settings and not the unrelated failures joined with them. It
// returns nil when none matches.
func badSettings(err error) []error {
	if err == nil || !errors.Is(err, flagshim.ErrBadSetting) {
		return nil
	}
	// Split only errors.Join's joins (their message is their parts' messages,
	// one per line), not an error that wraps two with fmt.Errorf("%w: %w").
	if j, ok := err.(interface{ Unwrap() []error }); ok && isJoin(err, j.Unwrap()) {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, badSettings(e)...)
		}
		return out
	}
	return []error{err}
}

func isJoin(err error, parts []error) bool {
	msgs := make([]string, 0, len(parts))
	for _, p := range parts {
		if p != nil {
			msgs = append(msgs, p.Error())
		}
	}
	return err.Error() == strings.Join(msgs, "\n")
}
