package visible

import (
	"fmt"
	"strconv"
)

// AscendRT is ASCEND_RT_VISIBLE_DEVICES' dialect, which differs from
// CUDA's: no UUIDs, no signs, no spaces, and a list out of order or with a
// repeat hides every device instead of ending the list. The rules are
// those of Runtime::GetVisibleDevices, SplitString and IsdigitString in
// hicann/runtime src/runtime/core/src/runtime.cc (master 681ef76, the same
// in tag v8.5.0), RT_SET_DEVICE_STR_MAX_LEN in
// src/runtime/core/inc/spec/base_info.hpp, and ApiImpl::GetDeviceCount in
// src/runtime/api/impl/api_impl.cc, which answers a rejected list with "no
// device"; CANN 8.5's environment-variable reference says the same
// ("only the device IDs before them are read"):
//
//   - only the first 128 bytes of the value are read (memcpy_s of at most
//     RT_SET_DEVICE_STR_MAX_LEN);
//   - a value that does not start with a decimal digit, the empty value
//     included, selects nothing (SplitString returns no token);
//   - entries are runs of decimal digits separated by single commas; the
//     list ends at any other character (a space, a sign, a letter) and at a
//     second comma in a row (",,"); a run of digits just before the
//     character that ends the list still counts ("0,1x" is 0 and 1);
//   - each entry is read as std::stoi does ("007" is 7); one past 2^31-1,
//     or past the last device, ends the list;
//   - an entry below the one before it, or equal to it, rejects the whole
//     list ("configured in ascending order", "cannot be duplicated"): no
//     device is visible;
//   - the list also ends once it holds as many entries as there are
//     devices.
//
// The devices are the runtime's logical devices in logical-id order, and
// the visible ones are numbered 0..n-1 in the list's order. Chips whose
// runtime lacks the feature (RT_FEATURE_DEVICE_VISIBLE in
// src/runtime/config/*/dev_info_reg.cc, which every data-center chip has)
// ignore the variable; the rules here apply it regardless.
type AscendRT struct{}

// ascendRTMaxLen is RT_SET_DEVICE_STR_MAX_LEN (base_info.hpp).
const ascendRTMaxLen = 128

// Select implements Dialect. A list the runtime rejects selects nothing,
// with a note saying why.
func (AscendRT) Select(value string, p Pool) (Selection, error) {
	whole := wholeOf(p)
	idx, note := SelectAscendRT(value, len(whole))
	out := Selection{Positions: []int{}, ByIndex: true}
	for _, i := range idx {
		out.Positions = append(out.Positions, whole[i])
	}
	if note != "" {
		out.Notes = append(out.Notes, note)
	}
	return out, nil
}

// SelectAscendRT returns the indexes value selects among n devices, and a
// note (or "") when the runtime rejects the whole list or it selects none.
func SelectAscendRT(value string, n int) (sel []int, note string) {
	if len(value) > ascendRTMaxLen {
		value = value[:ascendRTMaxLen]
	}
	sel = []int{}
	for _, tok := range splitAscendRT(value) {
		v, err := strconv.ParseInt(tok, 10, 32) // std::stoi: out of int's range throws
		if err != nil || v > int64(n)-1 {
			break
		}
		if k := len(sel); k > 0 {
			switch prev := int64(sel[k-1]); {
			case v < prev:
				return []int{}, fmt.Sprintf("%q is not in ascending order: the runtime sees no device", value)
			case v == prev:
				return []int{}, fmt.Sprintf("%q repeats device %d: the runtime sees no device", value, v)
			}
		}
		sel = append(sel, int(v))
		if len(sel) >= n {
			break
		}
	}
	if len(sel) == 0 && n > 0 {
		return sel, fmt.Sprintf("%q selects no device (decimal ids below %d, comma-separated, ascending)", value, n)
	}
	return sel, ""
}

// splitAscendRT is SplitString: the runs of digits of s, up to the first
// character that is neither a digit nor a single comma.
func splitAscendRT(s string) []string {
	if s == "" || !isDigit(s[0]) {
		return nil
	}
	var out []string
	start, commas := -1, 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			if start < 0 {
				start = i
			}
			commas = 0
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
		if s[i] != ',' {
			return out
		}
		if commas++; commas > 1 {
			return out
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Format implements Dialect: decimal logical ids, which the runtime only
// takes in ascending order (the child numbers them 0..n-1 in that order).
func (AscendRT) Format(p Pool, sel []int) (string, error) {
	whole := wholeOf(p)
	last := -1
	for _, i := range sel {
		k := indexOf(whole, i)
		if k >= 0 && k <= last {
			return "", fmt.Errorf("%w: Ascend's runtime takes its devices in ascending order only (and no device twice): give them in logical-id order", ErrSelection)
		}
		last = k
	}
	return indexes(p, sel)
}
