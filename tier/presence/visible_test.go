package presence

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/visible"
)

// devsWith makes n devices with the given UUIDs (nil: none).
func devsWith(n int, uuids []string) []Device {
	out := make([]Device, n)
	for i := range out {
		out[i] = Device{Index: i, SourceIndex: 10 + i}
		if uuids != nil {
			out[i].UUID = uuids[i]
		}
	}
	return out
}

func sources(ds []Device) []int {
	out := []int{}
	for i, d := range ds {
		if d.Index != i {
			panic(fmt.Sprintf("device %d has Index %d", i, d.Index))
		}
		out = append(out, d.SourceIndex-10)
	}
	return out
}

var nvUUIDs = []string{
	"GPU-8a1f0000-0000-0000-0000-000000000000",
	"GPU-8a2f0000-0000-0000-0000-000000000000",
	"GPU-b0000000-0000-0000-0000-000000000000",
	"GPU-c0000000-0000-0000-0000-000000000000",
}

// TestVisible: the CUDA reading kept for out-of-tree vendors (package
// visible's tests hold the whole table).
func TestVisible(t *testing.T) {
	got, err := Visible(devsWith(4, nvUUIDs), "GPU-c,GPU-b", true)
	require.NoError(t, err)
	assert.Equal(t, []int{3, 2}, sources(got))
	got, err = Visible(devsWith(3, nil), "ignored", false)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, sources(got), "unset: every device")
	got, err = Visible(devsWith(3, nil), "", true)
	require.NoError(t, err)
	assert.Empty(t, got, "set and empty: none")
	_, err = Visible(devsWith(2, nil), "GPU-8a1f", true)
	assert.ErrorIs(t, err, ErrUndecidable)
	_, err = Visible(devsWith(2, nvUUIDs[:2]), "MIG-1", true)
	assert.ErrorIs(t, err, ErrUndecidable)

	shuffled := []Device{{SourceIndex: 12, Index: 5}, {SourceIndex: 10, Index: 9}}
	got = Renumber(shuffled)
	assert.Equal(t, []int{2, 0}, sources(got))
	assert.Equal(t, 5, shuffled[0].Index, "Renumber copies: its argument keeps its ordinals")
}

// TestVisibleRules: a partition is tied to its device by Parent, and
// the rules' notes and applied variables come back.
func TestVisibleRules(t *testing.T) {
	all := []Device{
		{SourceIndex: 10, UUID: "GPU-a", Name: "H100", Partitioned: true, PartitionsListed: true},
		{SourceIndex: 11, UUID: "GPU-b", Name: "H100", PartitionsListed: true},
		{SourceIndex: 12, UUID: "MIG-a1", Parent: "GPU-a"},
	}
	vs := AsVisible(all)
	assert.True(t, vs[2].Partition)
	assert.Equal(t, 0, vs[2].Parent)
	assert.True(t, vs[0].Partitioned)
	assert.Equal(t, "H100", vs[1].Model)

	rules := &visible.Rules{Runtime: "CUDA",
		Stages: []visible.Stage{{Vars: []visible.Var{{Name: "KIT_VISIBLE"}}, Dialect: visible.CUDA{UUIDPrefix: "GPU-", MIG: true}}}}
	e := NewEnv(WithLookupEnv(func(k string) (string, bool) {
		if k == "KIT_VISIBLE" {
			return "1", true
		}
		return "", false
	}))
	devs, applied, err := e.VisibleRules(rules)(all)
	require.NoError(t, err)
	assert.Equal(t, "KIT_VISIBLE=1", applied)
	assert.Equal(t, []int{1}, sources(devs))

	m, err := NewEnv(WithLookupEnv(func(string) (string, bool) { return "", false })).Map(rules, all)
	require.NoError(t, err)
	assert.Equal(t, []int{2}, m.Visible, "unset: the MIG instance alone")
	assert.NotEmpty(t, m.Notes)
}
