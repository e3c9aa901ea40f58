package presence

import (
	"fmt"
	"strconv"
	"strings"
)

// The visibility variables, read the way each runtime reads them. The three
// dialects share one parser (selectVisible); their differences are real and
// come from the sources named below.
//
// torchCUDA: CUDA_VISIBLE_DEVICES as PyTorch's torch/cuda/__init__.py
// (_parse_visible_devices, _transform_uuid_to_ordinals, _device_count_nvml)
// reads it for its NVML-based count; MUSA_VISIBLE_DEVICES is read the same
// way (MUSA mirrors CUDA; not confirmed from MUSA's runtime, which is closed).
//   - A value starting "GPU-" is a list of UUID prefixes: entries are taken
//     up to the first one not starting "GPU-" (entries are not trimmed); a
//     repeated entry empties the list; each maps to the one device whose
//     UUID starts with it, and an entry matching none or several ends the
//     list; two entries on one device empty it.
//   - A value starting "MIG-" names MIG instances, which NVML's device list
//     does not hold: ErrUndecidable (torch falls back to initializing CUDA).
//   - Otherwise ordinals, read like strtoul: each entry trimmed, an optional
//     sign, the leading digits ("1gpu" is 1); an entry with no digits or a
//     negative one ends the list; a repeated ordinal empties it; the list
//     then ends at the first ordinal past the last device. So "" and "-1"
//     select nothing.
//
// rocr: ROCR_VISIBLE_DEVICES as ROCR's RvdFilter (ROCR-Runtime
// src/core/runtime/amd_filter_device.cpp and its header): "" selects
// nothing; entries split on ',' (a final empty entry dropped), upper-cased
// and trimmed; only the first <device count> entries are read; an entry
// starting 'G' is a UUID prefix of 5 to 20 characters matching exactly one
// device ("GPU-" + 16 hex digits of the KFD unique_id; a device with
// unique_id 0 matches nothing); any other entry must be a whole C strtol
// number in base 0 ("0x1", "010" octal), truncated to 32 bits as ROCR
// stores it. An entry that is empty (ROCR would throw), illegal, out of
// range, unmatched, ambiguous or repeated ends the list.
//
// clr: HIP_VISIBLE_DEVICES (or, when it is unset or empty,
// CUDA_VISIBLE_DEVICES) as HIP's CLR reads it (rocclr/device/rocm/
// rocdevice.cpp), over the devices ROCR left: an empty value selects every
// device; entries split on ','; an entry containing "GPU-" is replaced by
// the index of the first device whose UUID contains it; an entry must then
// be a canonical decimal index ("01", "+1", " 1" are not) below the device
// count, else the list ends; a repeated index is skipped.
type dialect int

const (
	torchCUDA dialect = iota
	rocr
	clr
)

// pool is what the parser selects from: n devices and their UUIDs (nil when
// the source knows none, "" for one device without).
type pool struct {
	n     int
	uuids []string
}

// selectVisible returns the positions in p that value (a set variable)
// selects, in the runtime's order.
func selectVisible(d dialect, value string, p pool) ([]int, error) {
	switch d {
	case rocr:
		return selectROCR(value, p)
	case clr:
		return selectCLR(value, p)
	default:
		return selectTorch(value, p)
	}
}

func selectTorch(value string, p pool) ([]int, error) {
	if strings.HasPrefix(value, "MIG-") {
		return nil, fmt.Errorf("%w: %q names MIG instances", ErrUndecidable, value)
	}
	out := []int{}
	if strings.HasPrefix(value, "GPU-") {
		var cands []string
		seenRaw := map[string]bool{}
		for _, e := range strings.Split(value, ",") {
			if seenRaw[e] {
				return []int{}, nil
			}
			if !strings.HasPrefix(e, "GPU-") {
				break
			}
			seenRaw[e] = true
			cands = append(cands, e)
		}
		if p.uuids == nil {
			return nil, fmt.Errorf("%w: %q names UUIDs and this source knows none", ErrUndecidable, value)
		}
		seen := map[int]bool{}
		for _, c := range cands {
			i := uniquePrefix(c, p.uuids)
			if i < 0 {
				break
			}
			if seen[i] {
				return []int{}, nil
			}
			seen[i] = true
			out = append(out, i)
		}
		return out, nil
	}
	seen := map[string]bool{}
	var ords []int
	for _, e := range strings.Split(value, ",") {
		v, key, ok := strtoulTorch(strings.TrimSpace(e))
		if ok && v >= 0 && seen[key] {
			return []int{}, nil
		}
		if !ok || v < 0 {
			break
		}
		seen[key] = true
		ords = append(ords, v)
	}
	for _, v := range ords {
		if v >= p.n {
			break
		}
		out = append(out, v)
	}
	return out, nil
}

// strtoulTorch is torch's _strtoul on a trimmed entry: an optional sign at
// the start, then the leading ASCII digits. key is the number in canonical
// form (for repeats, whatever its size); v saturates; ok is false when there
// are no digits (torch returns -1, or raises on a lone sign).
func strtoulTorch(s string) (v int, key string, ok bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return -1, "", false
	}
	digits := strings.TrimLeft(s[i:j], "0")
	if digits == "" {
		return 0, "0", true
	}
	const maxInt = int(^uint(0) >> 1)
	for _, c := range []byte(digits) {
		d := int(c - '0')
		if v > (maxInt-d)/10 {
			v = maxInt
			break
		}
		v = v*10 + d
	}
	if neg {
		return -v, "-" + digits, true
	}
	return v, digits, true
}

// uniquePrefix is the one device whose UUID starts with c, or -1 (none or
// several). A "GPU-" entry also matches a UUID the vendor writes without
// that prefix (MTML's), as torch strips it for amdsmi serials.
func uniquePrefix(c string, uuids []string) int {
	best := -1
	for i, u := range uuids {
		if u == "" {
			continue
		}
		cc := c
		if !strings.HasPrefix(u, "GPU-") {
			cc = strings.TrimPrefix(c, "GPU-")
		}
		if cc == "" || !strings.HasPrefix(u, cc) {
			continue
		}
		if best >= 0 {
			return -1
		}
		best = i
	}
	return best
}

func selectROCR(value string, p pool) ([]int, error) {
	out := []int{}
	if value == "" {
		return out, nil
	}
	toks := strings.Split(value, ",")
	if len(toks) > 1 && toks[len(toks)-1] == "" {
		toks = toks[:len(toks)-1]
	}
	if len(toks) > p.n {
		toks = toks[:p.n]
	}
	seen := map[int]bool{}
	for _, t := range toks {
		t = strings.Trim(asciiUpper(t), " \t\n\v\f\r")
		if t == "" {
			break
		}
		var idx int
		if t[0] == 'G' {
			if p.uuids == nil {
				return nil, fmt.Errorf("%w: entry %q is a UUID and this source knows none", ErrUndecidable, t)
			}
			idx = rocrUUID(t, p.uuids)
			if idx < 0 {
				break
			}
		} else {
			v, ok := strtolBase0(t)
			if !ok {
				break
			}
			idx = int(int32(v))
		}
		if idx < 0 || idx >= p.n || seen[idx] {
			break
		}
		seen[idx] = true
		out = append(out, idx)
	}
	return out, nil
}

// rocrUUID is RvdFilter::ProcessUuidToken: t (upper-case) is a prefix of
// exactly one device's upper-case UUID.
func rocrUUID(t string, uuids []string) int {
	if len(t) < 5 || len(t) > 20 {
		return -1
	}
	best := -1
	for i, u := range uuids {
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
		best = i
	}
	return best
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

func selectCLR(value string, p pool) ([]int, error) {
	out := []int{}
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
			if p.uuids == nil {
				return nil, fmt.Errorf("%w: entry %q is a UUID and this source knows none", ErrUndecidable, tok)
			}
			for i, u := range p.uuids {
				if u != "" && strings.Contains(u, tok) {
					tok = strconv.Itoa(i)
					break
				}
			}
		}
		idx, err := strconv.ParseInt(tok, 10, 32)
		if err != nil || strconv.FormatInt(idx, 10) != tok || idx < 0 || int(idx) >= p.n {
			break
		}
		if !seen[int(idx)] {
			seen[int(idx)] = true
			out = append(out, int(idx))
		}
		pos = end + 1
		if pos >= len(value) {
			break
		}
	}
	return out, nil
}
