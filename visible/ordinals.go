package visible

import (
	"fmt"
	"strconv"
	"strings"
)

// Ordinals is the dialect of a runtime that documents plain lists of
// indexes and nothing more ("MUSA_VISIBLE_DEVICES=0,1,2,3"): a value that
// is a comma-separated list of distinct canonical decimal indexes below
// the device count shows those devices, in the list's order. Any other
// value (a sign, a space, a repeat, an index past the last device, a
// UUID) is ErrUndecidable, since how the runtime reads it is not public;
// so is the empty value unless EmptyHides says the runtime documents it.
type Ordinals struct {
	// EmptyHides: a set value of nothing but spaces (the empty value
	// included) shows no device (Paddle's GetDeviceCountImpl reads
	// XPU_VISIBLE_DEVICES so).
	EmptyHides bool
	// Source names where the documented form comes from, for the error.
	Source string
}

// Select implements Dialect.
func (o Ordinals) Select(value string, p Pool) (Selection, error) {
	whole := wholeOf(p)
	out := Selection{Positions: []int{}, ByIndex: true}
	if strings.Trim(value, " ") == "" {
		if o.EmptyHides {
			return out, nil
		}
		return Selection{}, fmt.Errorf("%w: an empty value; %s documents lists of indexes only", ErrUndecidable, o.Source)
	}
	seen := map[int]bool{}
	for _, e := range strings.Split(value, ",") {
		v, err := strconv.Atoi(e)
		switch {
		case err != nil || strconv.Itoa(v) != e || v < 0:
			return Selection{}, fmt.Errorf("%w: entry %q is not a plain index, and %s documents lists of indexes only", ErrUndecidable, e, o.Source)
		case v >= len(whole):
			return Selection{}, fmt.Errorf("%w: index %d is past the last of %d devices, and what the runtime then does is not documented", ErrUndecidable, v, len(whole))
		case seen[v]:
			return Selection{}, fmt.Errorf("%w: index %d repeats, and what the runtime then does is not documented", ErrUndecidable, v)
		}
		seen[v] = true
		out.Positions = append(out.Positions, whole[v])
	}
	return out, nil
}

// Format implements Dialect: decimal indexes.
func (Ordinals) Format(p Pool, sel []int) (string, error) { return indexes(p, sel) }
