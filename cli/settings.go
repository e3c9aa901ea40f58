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

// settingError is a bad setting as the CLI prints it: "invalid setting: "
// and the message from the variable's name on, without the steps and
// packages the error came through: "ecosystem/alias: flagshim: invalid
// setting: flagos: no backend to route to: FLAGOS_BACKEND=..." reads
// "invalid setting: FLAGOS_BACKEND=...". It matches what it wraps.
type settingError struct{ err error }

func (e settingError) Error() string { return settingMessage(e.err.Error()) }
func (e settingError) Unwrap() error { return e.err }

// settingMessage cuts msg to start at the first variable of
// flagshim.Variables it names ("NAME="); a message naming none (a plugin's
// own variable) keeps what follows its last "invalid setting: ".
func settingMessage(msg string) string {
	const head = "invalid setting: "
	best := -1
	for _, v := range flagshim.Variables() {
		for from := 0; ; {
			j := strings.Index(msg[from:], v.Name+"=")
			if j < 0 {
				break
			}
			j += from
			if j == 0 || !isNameByte(msg[j-1]) {
				if best < 0 || j < best {
					best = j
				}
				break
			}
			from = j + 1
		}
	}
	if best >= 0 {
		return head + msg[best:]
	}
	if i := strings.LastIndex(msg, head); i >= 0 {
		return msg[i:]
	}
	return msg
}

func isNameByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z'
}
