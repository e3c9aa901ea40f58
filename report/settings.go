package report

import (
	"errors"
	"strings"

	"github.com/flagos-ai/flagshim"
)

// Settings is the bad settings within errs (each host's own checks, then
// Init's error), each a SettingError, each said once, joined; nil when none
// is bad. Every host reports a bad setting with it, so the CLI's message,
// the C library's flagshim_error and Python's InitError read the same.
func Settings(errs ...error) error {
	var out []error
	for _, err := range errs {
		for _, b := range BadSettings(err) {
			out = append(out, SettingError{b})
		}
	}
	return errors.Join(dedupe(out)...)
}

// dedupe drops the errors whose message an earlier one already carries
// (the CLI and Init both report a bad FLAGOS_ALIAS_CUDA; Init's alias step
// and its check of the settings both report it too).
func dedupe(errs []error) []error {
	var out []error
	for _, e := range errs {
		seen := false
		for _, o := range out {
			if strings.Contains(o.Error(), e.Error()) || strings.Contains(e.Error(), o.Error()) {
				seen = true
				break
			}
		}
		if !seen {
			out = append(out, e)
		}
	}
	return out
}

// BadSettings returns the errors within err (Init's, often a join of every
// step's error) that match flagshim.ErrBadSetting, so that a command prints
// the bad settings and not the unrelated failures joined with them. It
// returns nil when none matches.
func BadSettings(err error) []error {
	if err == nil || !errors.Is(err, flagshim.ErrBadSetting) {
		return nil
	}
	// Split only errors.Join's joins (their message is their parts' messages,
	// one per line), not an error that wraps two with fmt.Errorf("%w: %w").
	if j, ok := err.(interface{ Unwrap() []error }); ok && isJoin(err, j.Unwrap()) {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, BadSettings(e)...)
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

// SettingError is a bad setting as every host prints it (the CLI, the C
// library's flagshim_error, Python's InitError): "invalid setting: "
// and the message from the variable's name on, without the steps and
// packages the error came through: "ecosystem/alias: flagshim: invalid
// setting: flagos: no backend to route to: FLAGOS_BACKEND=..." reads
// "invalid setting: FLAGOS_BACKEND=...". It matches what it wraps.
type SettingError struct{ Err error }

func (e SettingError) Error() string { return SettingMessage(e.Err.Error()) }
func (e SettingError) Unwrap() error { return e.Err }

// SettingMessage cuts msg to start at the first variable of
// flagshim.Variables it names ("NAME="); a message naming none (a plugin's
// own variable) keeps what follows its last "invalid setting: ".
func SettingMessage(msg string) string {
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
