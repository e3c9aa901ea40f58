package drivertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
)

// The exact tier against the presence tier: each device's record, field
// for field (issue 35's "one record in every tier"). The parent first asks
// a child for the exact tier's records on the driver's fake, then builds a
// sysfs tree holding those devices and the vendor's management-library
// fake describing them (Suite.Presence), and a second child compares both
// tiers' records there: a field both tiers know is equal, a field one
// cannot know is named in its Unknown, and neither tier reports a conflict.

// RecordDriverVersion is the kernel driver version the record case writes
// into its sysfs tree; Suite.Presence makes the management library's fake
// report it too.
const RecordDriverVersion = "7.8.9"

const (
	recordOutEnv  = "DRIVERTEST_RECORD_OUT"  // where record_exact writes the records
	recordRootEnv = "DRIVERTEST_RECORD_ROOT" // the sysfs tree of record_tiers
)

// noRecordPresence skips record_tiers for a suite without Presence.
func noRecordPresence(s *Suite) string {
	if s.Presence == nil {
		return fmt.Sprintf("the %s suite gives no Presence (its presence tier on a fake told the driver fake's devices): its exact and presence records are not compared", s.typ())
	}
	return ""
}

// recordOptions are the options both tiers' backends get: the tree, and
// the vendor's PCI vendor ids named after it (as the registry does).
func (s *Suite) recordOptions(root string) []driver.Option {
	makers := map[uint16]string{}
	for _, id := range s.Vendor.PCIVendors {
		makers[id] = s.Vendor.Name
	}
	return []driver.Option{driver.WithSysRoot(root), driver.WithMakers(makers)}
}

// recordExact checks the exact tier's records on their own and writes them
// where the parent asked (record_tiers' first step).
func recordExact(t *testing.T, s *Suite, _ *driver.Backend) {
	root := os.Getenv(recordRootEnv)
	if root == "" {
		root = "/nonexistent/drivertest-machine"
	}
	b := s.New(s.recordOptions(root)...)
	n, err := b.DeviceCount()
	require.NoError(t, err)
	var recs []device.Record
	for i := 0; i < n; i++ {
		r, err := b.Record(i)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("%s:%d", s.typ(), i), r.Device)
		assert.Equal(t, i, r.VisibleIndex)
		assert.Equal(t, s.typ(), r.Type)
		assert.Equal(t, "exact", r.Tier)
		assert.True(t, r.Usable)
		assert.Equal(t, s.name(s.deviceName([]string{"Rec GPU 0", "Rec GPU 1"}, i)), r.Name)
		assert.Empty(t, r.Conflicts)
		if root == "/nonexistent/drivertest-machine" && r.PCIBusID != "" {
			assert.Contains(t, r.Unknown["numa_node"], "sysfs lists no PCI device at "+r.PCIBusID, "no sysfs: its facts are unknown, and say why")
			assert.Equal(t, -1, r.Index, "no sysfs: no place in PCI order")
		}
		assert.NotEmpty(t, r.Unknown["free_memory"], "the exact tier learns free memory only with a context")
		recs = append(recs, r)
	}
	_, err = b.Record(n)
	assert.ErrorIs(t, err, device.ErrInvalidIndex)
	if out := os.Getenv(recordOutEnv); out != "" {
		data, err := json.Marshal(recs)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(out, data, 0o600))
	}
}

// recordTiersSetup asks a child for the exact records, builds the sysfs
// tree and the presence fake that describe the same devices, and returns
// the environment of the child that compares them.
func recordTiersSetup(t *testing.T, s *Suite) []string {
	env := withOverride(nil, "FAKE_DEVICE_NAMES=Rec GPU 0,Rec GPU 1")(t, s)
	out := filepath.Join(dltest.PrivateDir(t), "records.json")
	dirs := dirsEnv + "=" + dltest.PrivateDir(t)
	dltest.MustChild(t, s.Child, append(env, caseEnv+"=record_exact", recordOutEnv+"="+out, dirs)...)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var recs []device.Record
	require.NoError(t, json.Unmarshal(data, &recs))
	require.NotEmpty(t, recs)

	root := dltest.PrivateDir(t)
	for i := range recs {
		recs[i].DriverVersion = RecordDriverVersion
		if recs[i].PCIBusID != "" {
			writePCIDevice(t, root, recs[i].PCIBusID, s.Vendor.PCIVendors, i)
		}
	}
	return append(append(env, recordRootEnv+"="+root), s.Presence(t, dltest.PrivateDir(t), root, recs)...)
}

// writePCIDevice makes sysfs's entry of an accelerator of the vendor at
// addr, bound to the driver "drivertest" whose module gives
// RecordDriverVersion.
func writePCIDevice(t *testing.T, root, addr string, vendors []uint16, i int) {
	t.Helper()
	dir := filepath.Join(root, "sys/bus/pci/devices", addr)
	var vendor uint16 = 0x1234
	if len(vendors) > 0 {
		vendor = vendors[0]
	}
	files := map[string]string{
		"vendor":        fmt.Sprintf("0x%04x\n", vendor),
		"device":        fmt.Sprintf("0x%04x\n", 0x2330+i),
		"class":         "0x120000\n",
		"numa_node":     fmt.Sprintf("%d\n", i%2),
		"local_cpulist": fmt.Sprintf("%d-%d\n", 8*i, 8*i+7),
	}
	for k, v := range files {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644))
	}
	drv := filepath.Join(root, "sys/bus/pci/drivers/drivertest")
	mod := filepath.Join(root, "sys/module/drivertest")
	require.NoError(t, os.MkdirAll(drv, 0o755))
	require.NoError(t, os.MkdirAll(mod, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(mod, "version"), []byte(RecordDriverVersion+"\n"), 0o644))
	if _, err := os.Lstat(filepath.Join(drv, "module")); err != nil {
		require.NoError(t, os.Symlink("../../../../module/drivertest", filepath.Join(drv, "module")))
	}
	require.NoError(t, os.Symlink("../../../../bus/pci/drivers/drivertest", filepath.Join(dir, "driver")))
}

// recordTiers compares the records of both tiers, device by device.
func recordTiers(t *testing.T, s *Suite, _ *driver.Backend) {
	root := os.Getenv(recordRootEnv)
	exact := s.New(s.recordOptions(root)...)
	pe := presence.NewEnv(presence.WithRoot(root))
	pres := s.New(append(s.recordOptions(root), driver.WithPresence(pe))...)
	r := pres.Available()
	require.True(t, r.Available, "the presence tier sees the devices: %s", r.Reason)
	n, err := exact.DeviceCount()
	require.NoError(t, err)
	require.Equal(t, n, r.Devices, "both tiers count the same devices")
	for i := 0; i < n; i++ {
		e, err := exact.Record(i)
		require.NoError(t, err)
		p, err := pres.Record(i)
		require.NoError(t, err)
		assert.Equal(t, "presence", p.Tier)
		assert.Empty(t, e.Conflicts, "exact tier, device %d", i)
		assert.Empty(t, p.Conflicts, "presence tier, device %d", i)
		if testing.Verbose() {
			je, _ := json.Marshal(e)
			jp, _ := json.Marshal(p)
			t.Logf("exact:    %s\npresence: %s", je, jp)
		}
		for _, d := range CompareRecords(e, p) {
			t.Errorf("%s:%d: %s", s.typ(), i, d)
		}
		assert.Equal(t, RecordDriverVersion, e.DriverVersion, "the exact tier reads the kernel driver's version in sysfs")
		assert.Equal(t, i, e.Index, "its place in PCI order (sysfs)")
		assert.Equal(t, i%2, e.NUMANode)
	}
}

// CompareRecords lists where two records of one device disagree: each
// field (by its JSON key) both know with different values, and each field
// one leaves at its zero value without naming it in Unknown. The fields
// that say who answered and how (tier, reason, unknown, conflicts) are
// not compared. Empty when they agree.
func CompareRecords(a, b device.Record) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	typ := va.Type()
	for i := 0; i < typ.NumField(); i++ {
		key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		switch key {
		case "tier", "reason", "unknown", "conflicts":
			continue
		}
		fa, fb := va.Field(i), vb.Field(i)
		if reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			continue
		}
		unknownA, unknownB := a.Unknown[key] != "", b.Unknown[key] != ""
		if key == "minor" { // compute capability: one key for both numbers
			unknownA, unknownB = a.Unknown["major"] != "", b.Unknown["major"] != ""
		}
		switch {
		case unknownA && (fa.IsZero() || fa.Equal(reflect.ValueOf(-1))):
		case unknownB && (fb.IsZero() || fb.Equal(reflect.ValueOf(-1))):
		default:
			out = append(out, fmt.Sprintf("%s: %s tier %v, %s tier %v (unknown: %q, %q)", key, a.Tier, fa.Interface(), b.Tier, fb.Interface(), a.Unknown[key], b.Unknown[key]))
		}
	}
	return out
}
