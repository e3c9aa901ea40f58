package visible

import (
	"fmt"
	"strings"
)

// Cambricon is MLU_VISIBLE_DEVICES' dialect (and CN_VISIBLE_DEVICES',
// which takes precedence), as torch_mlu reads it "to keep align with
// cnrt" (Cambricon/torch_mlu torch_mlu/mlu/__init__.py,
// _parse_visible_devices, _transform_uuid_to_ordinals, _device_count_cndev;
// branches r2.1_develop to r2.4_develop):
//
//   - A value holding a '-' and at least 36 characters is a list of UUIDs
//     as CNDev gives them (cndevGetUUID: 36 characters): entries up to the
//     first one without a '-'; a repeated entry empties the list; each
//     must equal a device's UUID exactly (no prefixes), and one that
//     equals none ends the list; two entries naming one device empty it.
//   - Otherwise indexes: each entry trimmed must be all decimal digits,
//     else the list ends (so "", "-1" and "+1" show nothing); a repeated
//     index empties the list; the list ends at the first index past the
//     last device.
//
// UUIDPrefix is what the source writes before CNDev's UUID ("MLU-", as
// Cambricon's k8s device plugin does): it is not part of the variable's
// form.
type Cambricon struct {
	UUIDPrefix string
}

// Select implements Dialect.
func (c Cambricon) Select(value string, p Pool) (Selection, error) {
	whole := wholeOf(p)
	if strings.Contains(value, "-") && len(value) >= 36 {
		if !p.UUIDs() {
			return Selection{}, fmt.Errorf("%w: %q names UUIDs and the source knows none", ErrUndecidable, value)
		}
		out := Selection{Positions: []int{}}
		var cands []string
		seenRaw := map[string]bool{}
		for _, e := range strings.Split(value, ",") {
			if seenRaw[e] {
				return out, nil
			}
			if !strings.Contains(e, "-") {
				break
			}
			seenRaw[e] = true
			cands = append(cands, e)
		}
		seen := map[int]bool{}
		for _, cand := range cands {
			i := -1
			for _, k := range whole {
				if u := p.Devices[k].UUID; u != "" && strings.TrimPrefix(u, c.UUIDPrefix) == cand {
					i = k // torch_mlu keeps the last match; UUIDs are unique
				}
			}
			if i < 0 {
				break
			}
			if seen[i] {
				return Selection{Positions: []int{}}, nil
			}
			seen[i] = true
			out.Positions = append(out.Positions, i)
		}
		return out, nil
	}
	out := Selection{Positions: []int{}, ByIndex: true}
	seen := map[string]bool{}
	var ords []string
	for _, e := range strings.Split(value, ",") {
		e = strings.TrimSpace(e)
		ok := e != ""
		for i := 0; i < len(e); i++ {
			ok = ok && isDigit(e[i])
		}
		key := strings.TrimLeft(e, "0")
		if ok && key == "" {
			key = "0"
		}
		if ok && seen[key] {
			return out, nil
		}
		if !ok {
			break
		}
		seen[key] = true
		ords = append(ords, key)
	}
	for _, k := range ords {
		if len(k) > 9 {
			break
		}
		v := 0
		for i := 0; i < len(k); i++ {
			v = v*10 + int(k[i]-'0')
		}
		if v >= len(whole) {
			break
		}
		out.Positions = append(out.Positions, whole[v])
	}
	return out, nil
}

// Format implements Dialect: CNDev's UUIDs (without the source's prefix)
// where every device selected has one, else decimal indexes.
func (c Cambricon) Format(p Pool, sel []int) (string, error) {
	if err := distinct(p, sel); err != nil {
		return "", err
	}
	ok := every(p, sel, func(d Device) bool {
		u := strings.TrimPrefix(d.UUID, c.UUIDPrefix)
		return len(u) >= 36 && strings.Contains(u, "-") && !strings.Contains(u, ",")
	})
	if !ok {
		return indexes(p, sel)
	}
	var b strings.Builder
	for k, i := range sel {
		if k > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strings.TrimPrefix(p.Devices[i].UUID, c.UUIDPrefix))
	}
	return b.String(), nil
}
