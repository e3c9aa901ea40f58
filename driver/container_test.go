package driver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:18:00.0": "0000:18:00.0", // NVML
		"0000:C1:00.0":     "0000:c1:00.0",
		"18:00.0":          "0000:18:00.0",
		"0001:03:01.7":     "0001:03:01.7",
		"":                 "",
		"0000:18:00":       "",
		"0000:1g:00.0":     "",
		"123456:18:00.0":   "",
		"a:b:c:d":          "",
	} {
		assert.Equal(t, want, driver.NormalizeBusID(in), in)
	}
}

func TestDRMNodes(t *testing.T) {
	tr := presencetest.NewTree(t).
		File("sys/bus/pci/devices/0000:c1:00.0/drm/renderD129/dev", "226:129").
		File("sys/bus/pci/devices/0000:c1:00.0/drm/card1/dev", "226:1").
		File("sys/bus/pci/devices/0000:c1:00.0/drm/controlD65/dev", "").
		Char("dev/dri/renderD129").Char("dev/dri/card1").
		File("sys/bus/pci/devices/0000:c2:00.0/drm/renderD130/dev", "226:130")
	e := presence.NewEnv(presence.WithRoot(tr.Root))
	nodes, err := driver.DRMNodes(e, "0000:C1:00.0")
	require.NoError(t, err)
	assert.Equal(t, []string{"/dev/dri/card1", "/dev/dri/renderD129"}, nodes)

	_, err = driver.DRMNodes(e, "0000:c2:00.0")
	assert.ErrorContains(t, err, "no DRM node that is a character device", "the sysfs entry without its node")
	_, err = driver.DRMNodes(e, "0000:c3:00.0")
	assert.Error(t, err)
	_, err = driver.DRMNodes(e, "")
	assert.ErrorContains(t, err, "is not one")
}
