package hip

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// idsTable is an amdgpu.ids in libdrm's format: a comment, the version
// line, entries with tabs after the commas.
const idsTable = `# List of AMDGPU IDs
#
# Syntax:
# device_id,	revision_id,	product_name        <-- single tab after comma

1.0.0
740F,	02,	AMD Instinct MI210
740C,	01,	AMD Instinct MI250X / MI250
74A1,	00,	AMD Instinct MI300X
74A1,	00,	a later duplicate is not used
74A5,	zz,	not a revision
7460,	00
`

func TestParseIDs(t *testing.T) {
	names := parseIDs(strings.NewReader(idsTable))
	assert.Equal(t, map[asicID]string{
		{0x740f, 0x02}: "AMD Instinct MI210",
		{0x740c, 0x01}: "AMD Instinct MI250X / MI250",
		{0x74a1, 0x00}: "AMD Instinct MI300X",
	}, names)
	assert.Empty(t, parseIDs(strings.NewReader("740F,\t02,\tthe first line is the version, not an entry\n")))
	assert.Equal(t, map[asicID]string{{0x1, 0x2}: "X"}, parseIDs(strings.NewReader("1.0.0\n1,2,X,Y\n")), "the name ends at the next comma")
}

func FuzzParseIDs(f *testing.F) {
	f.Add([]byte(idsTable))
	f.Add([]byte("1.0.0\n,,\n\x00,\x00,\x00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for k, name := range parseIDs(strings.NewReader(string(b))) {
			if name == "" || strings.Contains(name, ",") || strings.Contains(name, "\n") {
				t.Fatalf("%v: %q", k, name)
			}
		}
	})
}

// pciGPU writes sysfs's entry of an AMD GPU at addr.
func pciGPU(tr *presencetest.Tree, addr string, device, revision int) {
	dir := "sys/bus/pci/devices/" + addr
	tr.File(dir+"/vendor", "0x1002\n").File(dir+"/device", fmt.Sprintf("0x%04x\n", device)).
		File(dir+"/revision", fmt.Sprintf("0x%02x\n", revision)).File(dir+"/class", "0x038000\n")
}

// The presence tier names a GPU as the runtime does (amdgpu.ids), not by
// KFD's ASIC name, and says where it could not.
func TestKFDMarketingName(t *testing.T) {
	tr := presencetest.NewTree(t)
	kfdCPU(tr, 0)
	kfdGPU(tr, 1, "aldebaran", 1, 90010, 0, 0xc100, 64<<30)
	kfdGPU(tr, 2, "aldebaran", 2, 90010, 0, 0xc200, 64<<30)
	pciGPU(tr, "0000:c1:00.0", 0x740c, 0x01)
	pciGPU(tr, "0000:c2:00.0", 0x740c, 0x07) // a revision the table lacks
	tr.Char("dev/kfd").File("usr/share/libdrm/amdgpu.ids", idsTable)
	r := KFD(env(tr.Root))
	require.NoError(t, r.Err)
	require.Len(t, r.Devices, 2)
	assert.Equal(t, "AMD Instinct MI250X / MI250", r.Devices[0].Name)
	assert.Equal(t, "aldebaran", r.Devices[1].Name, "not in the table: KFD's name")

	// ROCm's libdrm's table comes first.
	tr.File("opt/amdgpu/share/libdrm/amdgpu.ids", "1.0.0\n740C,\t01,\tfrom ROCm's table\n")
	r = KFD(env(tr.Root))
	assert.Equal(t, "from ROCm's table", r.Devices[0].Name)

	// A table others may write is not believed.
	require.NoError(t, os.Chmod(tr.Path("opt/amdgpu/share/libdrm/amdgpu.ids"), 0o666))
	r = KFD(env(tr.Root))
	assert.Equal(t, "aldebaran", r.Devices[0].Name)
	assert.Contains(t, presencetest.Notes(r), "is not a regular file that only its owner may write")

	// A FIFO in its place is refused, never waited on.
	require.NoError(t, os.Remove(tr.Path("opt/amdgpu/share/libdrm/amdgpu.ids")))
	require.NoError(t, unix.Mkfifo(tr.Path("opt/amdgpu/share/libdrm/amdgpu.ids"), 0o644))
	r = KFD(env(tr.Root))
	assert.Equal(t, "aldebaran", r.Devices[0].Name)
	assert.Contains(t, presencetest.Notes(r), "is not a regular file")

	none := presencetest.NewTree(t)
	kfdGPU(none, 1, "aldebaran", 1, 90010, 0, 0xc100, 64<<30)
	pciGPU(none, "0000:c1:00.0", 0x740c, 0x01)
	none.Char("dev/kfd")
	r = KFD(presence.NewEnv(presence.WithRoot(none.Root)))
	assert.Equal(t, "aldebaran", r.Devices[0].Name)
	assert.Contains(t, presencetest.Notes(r), "no amdgpu.ids")
}
