package visible

import (
	"fmt"
	"strings"
)

// CUDA is CUDA_VISIBLE_DEVICES' dialect, as the CUDA programming guide
// documents it (appendix "CUDA Environment Variables": unset shows every
// GPU, empty none; indexes, UUIDs as nvidia-smi -L writes them and unique
// UUID prefixes; only the devices before an invalid entry are visible;
// MIG instances) and as PyTorch parses it where the guide is silent
// (torch/cuda/__init__.py: _parse_visible_devices,
// _transform_uuid_to_ordinals, _device_count_nvml):
//
//   - A value starting UUIDPrefix ("GPU-") is a list of UUID prefixes:
//     entries are taken up to the first one not starting UUIDPrefix
//     (entries are not trimmed); a repeated entry empties the list; each
//     names the one device whose UUID starts with it, and an entry naming
//     none or several (ambiguous) ends the list; two entries naming one
//     device empty it.
//   - A value starting "MIG-" names MIG instances (R470 and later drivers
//     give each a "MIG-<UUID>"), resolved against the partitions the
//     source lists; the pre-R470 form "MIG-GPU-<UUID>/<GI>/<CI>" and a
//     MIG name that is only a prefix are ErrUndecidable. CUDA enumerates a
//     single MIG instance per process, the first available (NVIDIA's MIG
//     user guide, "CUDA Device Enumeration"), so at most one is visible.
//   - Otherwise indexes, read like strtoul: each entry trimmed, an
//     optional sign, the leading digits ("1gpu" is 1); an entry with no
//     digits or a negative one ends the list; a repeated index empties
//     it; the list then ends at the first index past the last device. So
//     "" and "-1" show nothing.
//   - A GPU in MIG mode is not a CUDA device: where the GPUs selected
//     hold one in MIG mode, CUDA shows the first MIG instance of the first
//     such GPU and no GPU outside MIG mode ("CUDA will not enumerate
//     non-MIG GPU if any compute instance is enumerated on any other
//     GPU"); a GPU in MIG mode without an instance is ErrUndecidable.
//
// Other runtimes that copied PyTorch's parser use it with their own
// prefix (torch_gcu: "GCU-"); Undecidable lists value prefixes of forms
// the source cannot resolve ("DRS-" partitions).
type CUDA struct {
	UUIDPrefix  string   // "GPU-"
	MIG         bool     // "MIG-" names partitions (CUDA); else a "MIG-" value is ErrUndecidable
	Undecidable []string // value prefixes this tier cannot resolve
}

const migPrefix = "MIG-"

// Select implements Dialect.
func (c CUDA) Select(value string, p Pool) (Selection, error) {
	for _, u := range append([]string{}, c.Undecidable...) {
		if strings.HasPrefix(value, u) {
			return Selection{}, fmt.Errorf("%w: %q names a %s partition, which the source does not list", ErrUndecidable, value, strings.TrimSuffix(u, "-"))
		}
	}
	if strings.HasPrefix(value, migPrefix) {
		if !c.MIG {
			return Selection{}, fmt.Errorf("%w: %q names MIG instances", ErrUndecidable, value)
		}
		return c.selectMIG(value, p)
	}
	var sel Selection
	if c.UUIDPrefix != "" && strings.HasPrefix(value, c.UUIDPrefix) {
		s, err := c.selectUUIDs(value, p)
		if err != nil {
			return s, err
		}
		sel = s
	} else {
		sel = selectStrtoul(value, p)
	}
	if c.MIG {
		if s, ok, err := partitionsOf(p, sel.Positions); ok || err != nil {
			s.ByIndex = sel.ByIndex
			return s, err
		}
	}
	return sel, nil
}

// entries is torch's parse_list_with_prefix: the entries up to the first
// one not starting prefix; nil (an empty list) when an entry repeats.
func entries(value, prefix string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, e := range strings.Split(value, ",") {
		if seen[e] {
			return []string{}
		}
		if !strings.HasPrefix(e, prefix) {
			break
		}
		seen[e] = true
		out = append(out, e)
	}
	return out
}

func (c CUDA) selectUUIDs(value string, p Pool) (Selection, error) {
	cands := entries(value, c.UUIDPrefix)
	if !c.uuidsFor(p) {
		return Selection{}, fmt.Errorf("%w: %q names UUIDs and the source knows no %s... UUID", ErrUndecidable, value, c.UUIDPrefix)
	}
	whole := wholeOf(p)
	out := Selection{Positions: []int{}}
	seen := map[int]bool{}
	for _, cand := range cands {
		i := uniquePrefix(cand, p, whole)
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

// uuidsFor reports whether the pool's UUIDs are in the form the prefix
// names (every known one starts with it, and one is known).
func (c CUDA) uuidsFor(p Pool) bool {
	known := false
	for _, d := range p.Devices {
		if d.Partition || d.UUID == "" {
			continue
		}
		if !strings.HasPrefix(d.UUID, c.UUIDPrefix) {
			return false
		}
		known = true
	}
	return known
}

// uniquePrefix is the one device among positions whose UUID starts with
// cand, or -1 (none or several).
func uniquePrefix(cand string, p Pool, positions []int) int {
	best := -1
	for _, i := range positions {
		u := p.Devices[i].UUID
		if u == "" || !strings.HasPrefix(u, cand) {
			continue
		}
		if best >= 0 {
			return -1
		}
		best = i
	}
	return best
}

// selectStrtoul reads indexes as torch does.
func selectStrtoul(value string, p Pool) Selection {
	whole := wholeOf(p)
	out := Selection{Positions: []int{}, ByIndex: true}
	seen := map[string]bool{}
	var ords []int
	for _, e := range strings.Split(value, ",") {
		v, key, ok := strtoulTorch(strings.TrimSpace(e))
		if ok && v >= 0 && seen[key] {
			return out
		}
		if !ok || v < 0 {
			break
		}
		seen[key] = true
		ords = append(ords, v)
	}
	for _, v := range ords {
		if v >= len(whole) {
			break
		}
		out.Positions = append(out.Positions, whole[v])
	}
	return out
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

// selectMIG resolves a "MIG-" list against the listed partitions.
func (c CUDA) selectMIG(value string, p Pool) (Selection, error) {
	if strings.HasPrefix(value, migPrefix+"GPU-") {
		return Selection{}, fmt.Errorf("%w: %q is the MIG-GPU-<UUID>/<GI>/<CI> form of drivers before R470, which this tier does not resolve", ErrUndecidable, value)
	}
	if !p.Partitions {
		return Selection{}, fmt.Errorf("%w: %q names MIG instances and the source lists none", ErrUndecidable, value)
	}
	out := Selection{Positions: []int{}}
	for _, cand := range entries(value, migPrefix) {
		i, prefix := -1, false
		for k, d := range p.Devices {
			switch {
			case !d.Partition || d.UUID == "":
			case d.UUID == cand:
				i = k
			case strings.HasPrefix(d.UUID, cand):
				prefix = true
			}
		}
		if i < 0 && prefix {
			return Selection{}, fmt.Errorf("%w: %q is part of a MIG instance's UUID; whether CUDA takes MIG UUID prefixes is not documented", ErrUndecidable, cand)
		}
		if i < 0 {
			break
		}
		out.Positions = append(out.Positions, i)
	}
	if len(out.Positions) > 1 {
		out.Notes = append(out.Notes, fmt.Sprintf("CUDA enumerates one MIG instance per process: %s only", p.Devices[out.Positions[0]].UUID))
		out.Positions = out.Positions[:1]
	}
	return out, nil
}

// partitionsOf applies CUDA's MIG rule to the whole devices at positions
// (in the runtime's order): ok is false when none is in MIG mode (the
// selection stands); else the selection is the first MIG instance of the
// first such device.
func partitionsOf(p Pool, positions []int) (Selection, bool, error) {
	out := Selection{Positions: []int{}}
	any := false
	for _, i := range positions {
		d := p.Devices[i]
		if d.Partition || !d.Partitioned {
			continue
		}
		any = true
		for k, q := range p.Devices {
			if q.Partition && q.Parent == i {
				out.Positions = append(out.Positions, k)
				break
			}
		}
		if len(out.Positions) > 0 {
			break
		}
		return out, true, fmt.Errorf("%w: %s is in MIG mode without a MIG instance; what CUDA then shows is not documented", ErrUndecidable, name(d, i))
	}
	if !any {
		return Selection{}, false, nil
	}
	if !p.Partitions {
		return out, true, fmt.Errorf("%w: a GPU is in MIG mode and the source lists no MIG instance", ErrUndecidable)
	}
	skipped := 0
	for _, i := range positions {
		if !p.Devices[i].Partitioned {
			skipped++
		}
	}
	note := "CUDA shows one MIG instance per process: " + p.Devices[out.Positions[0]].UUID
	if skipped > 0 {
		note += fmt.Sprintf(", and none of the %d GPU(s) outside MIG mode", skipped)
	}
	out.Notes = append(out.Notes, note)
	return out, true, nil
}

func name(d Device, i int) string {
	if d.UUID != "" {
		return d.UUID
	}
	return fmt.Sprintf("device %d", i)
}

// Format implements Dialect: full UUIDs where every device selected has
// one in the dialect's form (a MIG instance by its MIG UUID, alone), else
// indexes.
func (c CUDA) Format(p Pool, sel []int) (string, error) {
	if err := distinct(p, sel); err != nil {
		return "", err
	}
	parts, wholes := 0, 0
	for _, i := range sel {
		d := p.Devices[i]
		switch {
		case d.Partition:
			parts++
		case d.Partitioned:
			return "", fmt.Errorf("%w: %s is in MIG mode: select one of its MIG instances", ErrSelection, name(d, i))
		default:
			wholes++
		}
	}
	if parts > 0 {
		if !c.MIG {
			return "", fmt.Errorf("%w: this runtime's variable cannot name partitions", ErrSelection)
		}
		if parts > 1 || wholes > 0 {
			return "", fmt.Errorf("%w: CUDA enumerates one MIG instance per process and no GPU beside it: select one MIG instance alone", ErrSelection)
		}
		d := p.Devices[sel[0]]
		if !strings.HasPrefix(d.UUID, migPrefix) {
			return "", fmt.Errorf("%w: the MIG instance has no MIG UUID", ErrSelection)
		}
		return d.UUID, nil
	}
	if c.UUIDPrefix != "" && c.uuidsFor(p) && every(p, sel, func(d Device) bool { return strings.HasPrefix(d.UUID, c.UUIDPrefix) }) {
		return joinUUIDs(p, sel), nil
	}
	return indexes(p, sel)
}
