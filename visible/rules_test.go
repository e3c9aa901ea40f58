package visible

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules of the tests: as the vendor packages write them (drivers/<v>
// name their variables; the names here are only the tests').
var (
	cudaRules = &Rules{Runtime: "CUDA",
		Stages: []Stage{{Vars: []Var{{Name: "CVD"}}, Dialect: cudaDialect}},
		Order: &Order{Var: "CDO", Values: map[string]OrderKind{"FASTEST_FIRST": FastestFirst, "PCI_BUS_ID": PCIBusOrder},
			Default: FastestFirst, Other: UnknownOrder}}
	rocmRules = &Rules{Runtime: "ROCm", Stages: []Stage{
		{Vars: []Var{{Name: "RVD"}}, Dialect: ROCR{}},
		{Vars: []Var{{Name: "HVD", EmptyIsUnset: true}, {Name: "CVD", Foreign: true}}, Dialect: CLR{}},
	}}
	mluRules = &Rules{Runtime: "CNRT", Stages: []Stage{{Vars: []Var{{Name: "CN"}, {Name: "MLU"}, {Name: "CVD", Unknown: "only newer releases read it"}},
		Dialect: Cambricon{UUIDPrefix: "MLU-"}}}}
	macaRules = &Rules{Runtime: "MACA", Stages: []Stage{{Vars: []Var{{Name: "MACA", Unknown: "which variable MACA reads is not public"}, {Name: "CVD"}},
		Dialect: Ordinals{Source: "MetaX"}}}}
)

func envOf(kv ...string) Lookup {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// gpus: NVML order is not PCI order here (NVML promises none).
func gpus(model ...string) []Device {
	out := make([]Device, len(model))
	for i, m := range model {
		out[i] = Device{UUID: fmt.Sprintf("GPU-%d0000000-0000-0000-0000-000000000000", i), Model: m, Major: 9,
			PCIBusID: fmt.Sprintf("00000000:%02X:00.0", 0x40-0x10*i)}
	}
	return out
}

func TestResolveOrder(t *testing.T) {
	alike := gpus("H100", "H100", "H100")
	m, err := cudaRules.Resolve(alike, envOf())
	require.NoError(t, err)
	assert.Equal(t, []int{2, 1, 0}, m.Visible, "GPUs of one kind: PCI bus order")
	assert.True(t, m.Ordered)

	m, err = cudaRules.Resolve(alike, envOf("CVD", "0"))
	require.NoError(t, err)
	assert.Equal(t, []int{2}, m.Visible, "index 0 is the lowest bus id")
	assert.Equal(t, "CVD=0", m.Applied)

	unlike := gpus("H100", "A100", "H100")
	m, err = cudaRules.Resolve(unlike, envOf())
	require.NoError(t, err)
	assert.False(t, m.Ordered, "FASTEST_FIRST among unlike GPUs: the set is known, the order is not")
	assert.Equal(t, []int{0, 1, 2}, m.Visible)
	assert.Contains(t, m.Notes[0], "PCI_BUS_ID")

	_, err = cudaRules.Resolve(unlike, envOf("CVD", "0"))
	assert.ErrorIs(t, err, ErrUndecidable, "index 0 is the fastest, which is the driver's own choice")

	m, err = cudaRules.Resolve(unlike, envOf("CVD", "-1"))
	require.NoError(t, err)
	assert.Empty(t, m.Visible, "nothing selected: no order needed")

	m, err = cudaRules.Resolve(unlike, envOf("CVD", "GPU-1,GPU-0"))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 0}, m.Visible, "UUIDs: the list's order")
	assert.True(t, m.Ordered)

	m, err = cudaRules.Resolve(unlike, envOf("CVD", "0,2", "CDO", "PCI_BUS_ID"))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 0}, m.Visible, "PCI_BUS_ID: index 0 is bus 0x20")

	_, err = cudaRules.Resolve(unlike, envOf("CVD", "0", "CDO", "SLOWEST_FIRST"))
	assert.ErrorIs(t, err, ErrUndecidable, "an undocumented order")

	noPCI := gpus("H100", "A100")
	noPCI[1].PCIBusID = ""
	m, err = cudaRules.Resolve(noPCI, envOf("CDO", "PCI_BUS_ID"))
	require.NoError(t, err)
	assert.False(t, m.Ordered, "PCI order without every bus id")

	one := gpus("H100")
	m, err = cudaRules.Resolve(one, envOf("CVD", "1"))
	require.NoError(t, err)
	assert.Empty(t, m.Visible, "1 is invalid with one GPU")
	m, err = cudaRules.Resolve(one, envOf("CVD", "0", "CDO", "whatever"))
	require.NoError(t, err)
	assert.Equal(t, []int{0}, m.Visible, "one device has one order")
}

func TestResolveMIG(t *testing.T) {
	devs := []Device{
		{UUID: "GPU-a", Model: "H100", PCIBusID: "0000:20:00.0", Partitioned: true, PartitionsListed: true},
		{UUID: "GPU-b", Model: "H100", PCIBusID: "0000:10:00.0", PartitionsListed: true},
		{UUID: "MIG-a1", Partition: true, Parent: 0},
		{UUID: "MIG-a2", Partition: true, Parent: 0},
	}
	m, err := cudaRules.Resolve(devs, envOf())
	require.NoError(t, err)
	assert.Equal(t, []int{2}, m.Visible, "unset: the first MIG instance alone, and not GPU-b")
	assert.Contains(t, m.Notes[0], "MIG-a1")

	m, err = cudaRules.Resolve(devs, envOf("CVD", "MIG-a2"))
	require.NoError(t, err)
	assert.Equal(t, []int{3}, m.Visible)

	m, err = cudaRules.Resolve(devs, envOf("CVD", "0"))
	require.NoError(t, err)
	assert.Equal(t, []int{1}, m.Visible, "index 0 is GPU-b (bus 0x10), outside MIG mode")

	m, err = cudaRules.Resolve(devs, envOf("CVD", "1"))
	require.NoError(t, err)
	assert.Equal(t, []int{2}, m.Visible, "index 1 is GPU-a, in MIG mode: its first instance")

	two := append(devs, Device{UUID: "GPU-c", Model: "A100", Partitioned: true, PartitionsListed: true}, Device{UUID: "MIG-c1", Partition: true, Parent: 4})
	_, err = cudaRules.Resolve(two, envOf())
	assert.ErrorIs(t, err, ErrUndecidable, "two GPUs in MIG mode, unlike: which comes first is CUDA's choice")
}

// TestResolveROCm: ROCR's list first, then HIP's over what ROCR left.
func TestResolveROCm(t *testing.T) {
	devs := []Device{}
	for _, u := range rocrUUIDs {
		devs = append(devs, Device{UUID: u})
	}
	m, err := rocmRules.Resolve(devs, envOf("RVD", "3,1,2", "HVD", "2,0"))
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, m.Visible)
	assert.Equal(t, "RVD=3,1,2 then HVD=2,0", m.Applied)

	m, err = rocmRules.Resolve(devs, envOf("HVD", "", "CVD", "1"))
	require.NoError(t, err)
	assert.Equal(t, []int{1}, m.Visible, "HIP empty: CUDA_VISIBLE_DEVICES is read")

	m, err = rocmRules.Resolve(devs, envOf("RVD", ""))
	require.NoError(t, err)
	assert.Empty(t, m.Visible)
}

func TestResolveUnknownVariables(t *testing.T) {
	devs := []Device{{UUID: mluUUIDs[0]}, {UUID: mluUUIDs[1]}}
	m, err := mluRules.Resolve(devs, envOf("CN", "1", "MLU", "0"))
	require.NoError(t, err)
	assert.Equal(t, []int{1}, m.Visible, "CN_VISIBLE_DEVICES first")
	_, err = mluRules.Resolve(devs, envOf("CVD", "0"))
	assert.ErrorIs(t, err, ErrUndecidable)
	assert.ErrorContains(t, err, "only newer releases read it")
	_, err = macaRules.Resolve(devs, envOf("MACA", "0", "CVD", "1"))
	assert.ErrorIs(t, err, ErrUndecidable)
}

// TestSelect: what Select writes reads back, through Resolve, as the
// devices selected, whatever the parent's environment held.
func TestSelect(t *testing.T) {
	for _, c := range []struct {
		name  string
		rules *Rules
		devs  []Device
		env   Lookup
		want  []int
		out   []Setting
	}{
		{"cuda uuids", cudaRules, gpus("H100", "A100"), envOf("CVD", "0"), []int{1, 0},
			[]Setting{{"CVD", "GPU-10000000-0000-0000-0000-000000000000,GPU-00000000-0000-0000-0000-000000000000"}}},
		{"cuda mig", cudaRules, []Device{{UUID: "GPU-a", Partitioned: true, PartitionsListed: true}, {UUID: "MIG-a1", Partition: true, Parent: 0}}, envOf(), []int{1},
			[]Setting{{"CVD", "MIG-a1"}}},
		{"cuda without uuids", cudaRules, []Device{{Model: "X", PCIBusID: "0000:20:00.0"}, {Model: "Y", PCIBusID: "0000:10:00.0"}}, envOf(), []int{0},
			[]Setting{{"CVD", "1"}, {"CDO", "PCI_BUS_ID"}}},
		{"rocm", rocmRules, []Device{{UUID: rocrUUIDs[0]}, {UUID: rocrUUIDs[1]}, {UUID: rocrUUIDs[2]}}, envOf("RVD", "1", "HVD", "0", "CVD", "0"), []int{2, 0},
			[]Setting{{"RVD", "GPU-BABAABBAABBABABA,GPU-BABABABABABABABA"}, {"HVD", "0,1"}}},
		{"rocm without uuids", rocmRules, []Device{{}, {}, {}}, envOf(), []int{2},
			[]Setting{{"RVD", "2"}, {"HVD", "0"}}},
		{"mlu", mluRules, []Device{{UUID: mluUUIDs[0]}, {UUID: mluUUIDs[1]}}, envOf("CVD", "0"), []int{1},
			[]Setting{{"CN", mluUUIDs[1][4:]}, {"MLU", mluUUIDs[1][4:]}}},
		{"maca", macaRules, []Device{{}, {}, {}}, envOf(), []int{2, 1},
			[]Setting{{"CVD", "2,1"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := c.rules.Select(c.devs, c.want, c.env)
			require.NoError(t, err)
			assert.Equal(t, c.out, out)
			child := map[string]string{}
			for _, s := range out {
				child[s.Name] = s.Value
			}
			m, err := c.rules.Resolve(c.devs, func(k string) (string, bool) {
				if v, ok := child[k]; ok {
					return v, true
				}
				return c.env(k)
			})
			require.NoError(t, err)
			assert.Equal(t, c.want, m.Visible, "the child sees exactly the devices selected")
		})
	}
}

func TestSelectRefuses(t *testing.T) {
	devs := []Device{{UUID: "GPU-a", Partitioned: true, PartitionsListed: true}, {UUID: "GPU-b", PartitionsListed: true}, {UUID: "MIG-a1", Partition: true, Parent: 0}, {UUID: "MIG-a2", Partition: true, Parent: 0}}
	for _, c := range []struct {
		name  string
		rules *Rules
		devs  []Device
		want  []int
		env   Lookup
		err   error
	}{
		{"nothing", cudaRules, devs, nil, envOf(), ErrSelection},
		{"twice", cudaRules, devs, []int{1, 1}, envOf(), ErrSelection},
		{"out of range", cudaRules, devs, []int{4}, envOf(), ErrSelection},
		{"gpu in mig mode", cudaRules, devs, []int{0}, envOf(), ErrSelection},
		{"two mig", cudaRules, devs, []int{2, 3}, envOf(), ErrSelection},
		{"mig and gpu", cudaRules, devs, []int{2, 1}, envOf(), ErrSelection},
		{"unknown variable set", macaRules, []Device{{}}, []int{0}, envOf("MACA", "0"), ErrUndecidable},
		{"unordered without uuids", &Rules{Runtime: "X", Stages: cudaRules.Stages, Order: &Order{Var: "CDO", Default: FastestFirst}},
			[]Device{{Model: "a"}, {Model: "b"}}, []int{0}, envOf(), ErrUndecidable},
		{"ascend out of order", &Rules{Runtime: "ACL", Stages: []Stage{{Vars: []Var{{Name: "ARVD"}}, Dialect: AscendRT{}}}},
			[]Device{{}, {}}, []int{1, 0}, envOf(), ErrSelection},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.rules.Select(c.devs, c.want, c.env)
			assert.ErrorIs(t, err, c.err)
		})
	}
}

// FuzzRules: Resolve never panics nor answers an impossible mapping, and
// every selection Select accepts reads back as itself.
func FuzzRules(f *testing.F) {
	for _, s := range []string{"", "0", "1,0", "GPU-1", "MIG-a1", "-1", "0,0", "PCI_BUS_ID"} {
		f.Add(s, "", uint8(3), uint8(0), uint8(7), uint8(1))
		f.Add("", s, uint8(4), uint8(1), uint8(3), uint8(2))
	}
	all := []*Rules{cudaRules, rocmRules, mluRules, macaRules}
	f.Fuzz(func(t *testing.T, v1, v2 string, n, r, flags, pick uint8) {
		rules := all[int(r)%len(all)]
		var devs []Device
		for i := 0; i < int(n%6); i++ {
			d := Device{Model: fmt.Sprint(i % int(1+flags%3)), PCIBusID: fmt.Sprintf("0000:%02x:00.0", (i*7)%11)}
			if flags&1 != 0 {
				d.UUID = fmt.Sprintf("GPU-%d", i)
				if rules == mluRules {
					d.UUID = fmt.Sprintf("MLU-%036d", i)[:40]
					d.UUID = d.UUID[:12] + "-" + d.UUID[13:]
				}
			}
			d.Partitioned = flags&8 != 0 && i == 0
			d.PartitionsListed = flags&16 != 0
			devs = append(devs, d)
		}
		if flags&8 != 0 && len(devs) > 0 {
			devs = append(devs, Device{UUID: "MIG-a1", Partition: true, Parent: 0})
		}
		names := rules.Vars()
		env := envOf(names[0], v1, names[len(names)-1], v2)
		m, err := rules.Resolve(devs, env)
		if err != nil {
			if !errors.Is(err, ErrUndecidable) {
				t.Fatalf("unexpected error %v", err)
			}
		} else {
			seen := map[int]bool{}
			for _, i := range m.Visible {
				if i < 0 || i >= len(devs) || seen[i] {
					t.Fatalf("bad mapping %v of %d", m.Visible, len(devs))
				}
				seen[i] = true
			}
		}
		if len(devs) == 0 {
			return
		}
		want := []int{int(pick) % len(devs)}
		if pick&0x80 != 0 && len(devs) > 1 {
			want = append(want, (want[0]+1)%len(devs))
		}
		out, err := rules.Select(devs, want, env)
		if err != nil {
			if !errors.Is(err, ErrSelection) && !errors.Is(err, ErrUndecidable) {
				t.Fatalf("Select: unexpected error %v", err)
			}
			return
		}
		child := map[string]string{}
		for _, s := range out {
			child[s.Name] = s.Value
		}
		m, err = rules.Resolve(devs, func(k string) (string, bool) {
			if v, ok := child[k]; ok {
				return v, true
			}
			return env(k)
		})
		if err != nil || fmt.Sprint(m.Visible) != fmt.Sprint(want) {
			t.Fatalf("Select(%v) wrote %v, which shows %v (%v)", want, out, m.Visible, err)
		}
	})
}

// TestMIGUnlisted: where the source does not list MIG instances (no MIG
// calls), a MIG name cannot be resolved.
func TestMIGUnlisted(t *testing.T) {
	devs := []Device{{UUID: "GPU-a"}, {UUID: "GPU-b", PartitionsListed: true}}
	_, err := cudaRules.Resolve(devs, envOf("CVD", "MIG-a1"))
	assert.ErrorIs(t, err, ErrUndecidable)
	devs[0].PartitionsListed = true
	m, err := cudaRules.Resolve(devs, envOf("CVD", "MIG-a1"))
	require.NoError(t, err)
	assert.Empty(t, m.Visible, "every GPU's instances are listed: the name names nothing")
}
