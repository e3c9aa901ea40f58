package visible

import (
	"fmt"
	"strconv"
	"strings"
)

// ROCR is ROCR_VISIBLE_DEVICES' dialect, as ROCR-Runtime's RvdFilter
// reads it (src/core/runtime/amd_filter_device.cpp and its header): ""
// shows nothing; entries split on ',' (a final empty entry dropped),
// upper-cased and trimmed; only the first <device count> entries are read;
// an entry starting 'G' is a UUID prefix of 5 to 20 characters matching
// exactly one device ("GPU-" + 16 hex digits of the KFD unique_id; a
// device with unique_id 0 matches nothing); any other entry must be a
// whole C strtol number in base 0 ("0x1", "010" octal), truncated to 32
// bits as ROCR stores it. An entry that is empty (ROCR would throw),
// illegal, out of range, unmatched, ambiguous or repeated ends the list.
type ROCR struct{}

// Select implements Dialect.
func (ROCR) Select(value string, p Pool) (Selection, error) {
	whole := wholeOf(p)
	out := Selection{Positions: []int{}}
	if value == "" {
		return out, nil
	}
	toks := strings.Split(value, ",")
	if len(toks) > 1 && toks[len(toks)-1] == "" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) > len(whole) {
		toks = toks[:len(whole)]
	}
	seen := map[int]bool{}
	for _, t := range toks {
		t = strings.Trim(asciiUpper(t), " \t\n\v\f\r")
		if t == "" {
			break
		}
		var idx int
		if t[0] == 'G' {
			if !p.UUIDs() {
				return Selection{}, fmt.Errorf("%w: entry %q is a UUID and the source knows none", ErrUndecidable, t)
			}
			idx = rocrUUID(t, p, whole)
			if idx < 0 {
				break
			}
		} else {
			v, ok := strtolBase0(t)
			if !ok {
				break
			}
			out.ByIndex = true
			idx = int(int32(v))
		}
		if idx < 0 || idx >= len(whole) || seen[idx] {
			break
		}
		seen[idx] = true
		out.Positions = append(out.Positions, whole[idx])
	}
	return out, nil
}

// rocrUUID is RvdFilter::ProcessUuidToken: t (upper-case) is a prefix of
// exactly one device's upper-case UUID; its index among whole, or -1.
func rocrUUID(t string, p Pool, whole []int) int {
	if len(t) < 5 || len(t) > 20 {
		return -1
	}
	best := -1
	for k, i := range whole {
		u := p.Devices[i].UUID
		if u == "" {
			continue // ROCR's "Invalid-UUID": matches no 'G' token
		}
		u = asciiUpper(u)
		if len(t) > len(u) || u[:len(t)] != t {
			continue
		}
		if best >= 0 {
			return -1
		}
		best = k
	}
	return best
}

// Format implements Dialect: UUIDs where every device selected has one,
// else decimal indexes.
func (ROCR) Format(p Pool, sel []int) (string, error) {
	if err := distinct(p, sel); err != nil {
		return "", err
	}
	if every(p, sel, func(d Device) bool {
		return strings.HasPrefix(asciiUpper(d.UUID), "G") && len(d.UUID) <= 20 && len(d.UUID) >= 5
	}) {
		return joinUUIDs(p, sel), nil
	}
	return indexes(p, sel)
}

// strtolBase0 is C's strtol(s, &end, 0) where the whole of s (trimmed, not
// empty) must be read: a sign, then "0x" hex, "0" octal or decimal digits.
// Overflow clamps as strtol does.
func strtolBase0(s string) (int64, bool) {
	i, neg := 0, false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case len(s) > i+2 && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && hexDigit(s[i+2]) >= 0:
		base, i = 16, i+2
	case len(s) > i && s[i] == '0':
		base = 8
	}
	if i == len(s) {
		return 0, false
	}
	const lim = uint64(1) << 63
	var u uint64
	over := false // the magnitude passed 2^63
	for ; i < len(s); i++ {
		d := hexDigit(s[i])
		if d < 0 || uint64(d) >= base {
			return 0, false
		}
		if over {
			continue
		}
		if u > (lim-uint64(d))/base {
			over = true
			continue
		}
		u = u*base + uint64(d)
	}
	switch {
	case neg && over:
		return -1 << 63, true
	case neg:
		return -int64(u-1) - 1, true // u <= 2^63
	case over || u == lim:
		return 1<<63 - 1, true
	}
	return int64(u), true
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// asciiUpper is C's toupper in the "C" locale: ASCII letters only.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// CLR is HIP_VISIBLE_DEVICES' dialect (CUDA_VISIBLE_DEVICES where it is
// unset or empty: a Stage with both, the first EmptyIsUnset), as HIP's CLR
// reads it (rocclr/device/rocm/rocdevice.cpp), over the devices ROCR left:
// entries split on ','; an entry containing "GPU-" is replaced by the
// index of the first device whose UUID contains it; an entry must then be
// a canonical decimal index ("01", "+1", " 1" are not) below the device
// count, else the list ends; a repeated index is skipped.
type CLR struct{}

// Select implements Dialect.
func (CLR) Select(value string, p Pool) (Selection, error) {
	whole := wholeOf(p)
	out := Selection{Positions: []int{}}
	seen := map[int]bool{}
	for pos := 0; ; {
		end := strings.IndexByte(value[pos:], ',')
		if end < 0 {
			end = len(value)
		} else {
			end += pos
		}
		tok := value[pos:end]
		if strings.Contains(tok, "GPU-") {
			if !p.UUIDs() {
				return Selection{}, fmt.Errorf("%w: entry %q is a UUID and the source knows none", ErrUndecidable, tok)
			}
			for k, i := range whole {
				if u := p.Devices[i].UUID; u != "" && strings.Contains(u, tok) {
					tok = strconv.Itoa(k)
					break
				}
			}
		} else {
			out.ByIndex = true
		}
		idx, err := strconv.ParseInt(tok, 10, 32)
		if err != nil || strconv.FormatInt(idx, 10) != tok || idx < 0 || int(idx) >= len(whole) {
			break
		}
		if !seen[int(idx)] {
			seen[int(idx)] = true
			out.Positions = append(out.Positions, whole[idx])
		}
		pos = end + 1
		if pos >= len(value) {
			break
		}
	}
	return out, nil
}

// Format implements Dialect: decimal indexes (ROCR's stage names the
// devices; CLR's keeps them all, in order).
func (CLR) Format(p Pool, sel []int) (string, error) { return indexes(p, sel) }
