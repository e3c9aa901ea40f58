package cdi_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/fleet/cdi"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
	"github.com/flagos-ai/flagshim/tier/presence"
	"github.com/flagos-ai/flagshim/tier/presence/presencetest"
)

// acme is a made-up vendor: /dev/acme<N>, a control node, and (with
// nodes) a mapping from a device's UUID to its node.
func acme(nodes bool) *driver.Vendor {
	v := &driver.Vendor{Type: device.Type("acme"), Name: "Acme",
		DeviceNodes: presence.NodeSpec{What: "/dev/acme*", Dir: "/dev", Prefixes: []string{"acme"}},
		Container:   driver.Container{Control: []string{"/dev/acmectl", "/dev/acme-absent"}, VisibleEnv: "ACME_VISIBLE_DEVICES"}}
	if nodes {
		v.Container.Nodes = driver.EachDevice(func(e *presence.Env, d driver.DeviceRef) ([]string, error) {
			if d.UUID == "" || d.UUID == "ACME-bad" {
				return nil, errors.New("not known")
			}
			return []string{"/dev/acme" + strings.TrimPrefix(d.UUID, "ACME-")}, nil
		})
	}
	return v
}

func names(s *cdi.Spec) []string {
	var out []string
	for _, d := range s.Devices {
		out = append(out, string(d.Name))
	}
	return out
}

func TestGenerate(t *testing.T) {
	tr := presencetest.NewTree(t).Char("dev/acme0").Char("dev/acme1").Char("dev/acmectl")
	o := cdi.Options{Root: tr.Root}
	devs := []driver.DeviceRef{{Index: 0, UUID: "ACME-1"}, {Index: 1, UUID: "ACME-0"}, {Index: 2, UUID: "ACME-bad"}, {Index: 3}}
	spec, notes, err := cdi.Generate(cdi.Source{Vendor: acme(true), Devices: devs}, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"0", "1", "ACME-1", "ACME-0", "all"}, names(spec), "indexes, then UUIDs, then all; devices without nodes left out")
	assert.Equal(t, "/dev/acme1", spec.Devices[0].ContainerEdits.DeviceNodes[0].Path, "visible index 0 is the device whose node is acme1")
	assert.Equal(t, tr.Path("dev/acme1"), spec.Devices[0].ContainerEdits.DeviceNodes[0].HostPath)
	assert.Equal(t, []string{"ACME_VISIBLE_DEVICES=ACME-1,ACME-0"}, spec.Devices[4].ContainerEdits.Env, "all names the injected devices")
	require.Len(t, spec.ContainerEdits.DeviceNodes, 1, "the control node that is there")
	assert.Equal(t, "/dev/acmectl", spec.ContainerEdits.DeviceNodes[0].Path)
	assert.Len(t, notes, 2, "%q", notes)
	assert.Contains(t, strings.Join(notes, "\n"), "device 2 (UUID \"ACME-bad\") is left out: not known")

	// Nodes not told apart: all alone, with every node.
	spec, notes, err = cdi.Generate(cdi.Source{Vendor: acme(false), Devices: devs[:2]}, o)
	require.NoError(t, err)
	assert.Equal(t, []string{"all"}, names(spec))
	assert.Len(t, spec.Devices[0].ContainerEdits.DeviceNodes, 2)
	assert.Contains(t, strings.Join(notes, "\n"), "only \"all\"")
	assert.Equal(t, "0.5.0", string(spec.Version), "hostPath")

	// At /, no hostPath, and no digit-led name: the lowest version.
	spec, _, err = cdi.Generate(cdi.Source{Vendor: acme(false)}, cdi.Options{Root: "/"})
	require.NoError(t, err)
	assert.Equal(t, "0.3.0", string(spec.Version))
	assert.Equal(t, []string{"ACME_VISIBLE_DEVICES="}, spec.Devices[0].ContainerEdits.Env, "no device: the variable hides all")

	v := acme(false)
	v.Container.VisibleEnv = ""
	_, _, err = cdi.Generate(cdi.Source{Vendor: v}, cdi.Options{Root: tr.Path("dev")})
	assert.ErrorIs(t, err, cdi.ErrNothing)
}

// TestLinks: the chain of links to the real file, the soname's link beside
// it, the real file last; a file others may write is refused.
func TestLinks(t *testing.T) {
	if dltest.CC() == "" {
		t.Skip("no C compiler to build a shared object with a soname")
	}
	dir := dltest.PrivateDir(t)
	src := filepath.Join(dir, "a.c")
	require.NoError(t, os.WriteFile(src, []byte("int acme(void) { return 1; }\n"), 0o644))
	real := filepath.Join(dir, "libacme.so.1.2.3")
	dltest.BuildLib(t, real, "libacme.so.1", []string{src})
	require.NoError(t, os.Symlink("libacme.so.1.2.3", filepath.Join(dir, "libacme.so.1")))
	require.NoError(t, os.Symlink("libacme.so.1", filepath.Join(dir, "libacme.so")))

	files, got, err := cdi.Links(filepath.Join(dir, "libacme.so"))
	require.NoError(t, err)
	assert.Equal(t, real, got)
	assert.Equal(t, []string{filepath.Join(dir, "libacme.so"), filepath.Join(dir, "libacme.so.1"), real}, files)

	files, _, err = cdi.Links(real)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "libacme.so.1"), real}, files, "the soname's link found from the real file")

	require.NoError(t, os.Chmod(real, 0o666))
	_, _, err = cdi.Links(real)
	assert.ErrorContains(t, err, "written by anyone")
	_, _, err = cdi.Links("libacme.so")
	assert.Error(t, err)
	require.NoError(t, os.Symlink("loop", filepath.Join(dir, "loop")))
	_, _, err = cdi.Links(filepath.Join(dir, "loop"))
	assert.ErrorContains(t, err, "symbolic links")
}
