package cli

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flagos-ai/flagshim/report"
)

// escape makes s safe to print as part of one line of text: control
// characters (a newline, a tab, ESC and the terminal sequences it starts,
// C1 controls), the invisible characters that reorder or hide text
// (bidirectional overrides and isolates, zero-width ones) and bytes that are
// not UTF-8 are written as Go escapes ("\n", "\x1b", "\u202e", "\xff").
// Device names and other texts come from drivers and management libraries:
// without this, one device named "GPU0\ncuda:1: ..." would print lines that
// look like another device's. JSON needs none of it: encoding/json escapes.
func escape(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case hidden(r):
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || hidden(r) {
			return true
		}
		i += n
	}
	return false
}

// hidden reports whether r is a control character or a formatting one
// (Unicode's Cc and Cf: bidirectional controls, zero-width characters),
// or a line or paragraph separator.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// escapeInfo is s with every text escaped (escape), for the text outputs
// (info, explain); the JSON of info --json is the raw one. The variables'
// values are left as they are: explain quotes them (%q), which escapes.
func escapeInfo(s report.Info) report.Info {
	env := s.Env
	v := reflect.ValueOf(&s).Elem()
	escapeValue(v)
	s.Env = env
	return s
}

// escapeValue escapes every string reachable from v in place, copying the
// slices and maps it changes so that the caller's report stays untouched.
func escapeValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(escape(v.String()))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				escapeValue(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := 0; i < c.Len(); i++ {
			escapeValue(c.Index(i))
		}
		v.Set(c)
	case reflect.Map:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			k.Set(it.Key())
			e.Set(it.Value())
			escapeValue(k)
			escapeValue(e)
			c.SetMapIndex(k, e)
		}
		v.Set(c)
	}
}
