package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// command is how vendor.go's go:generate line must run the generator.
var command = []string{"go", "run", "../../internal/gpudrv/gen"}

// TestGeneratedUpToDate runs the generator in memory for every drivers/*
// package with a vendor.go and fails when a committed z-file differs from
// what it gives, or a z-file it does not give is there.
func TestGeneratedUpToDate(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	vendors, err := filepath.Glob(filepath.Join(root, "drivers", "*", input))
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, vf := range vendors {
		dir := filepath.Dir(vf)
		pkg := filepath.ToSlash(strings.TrimPrefix(dir, root+string(filepath.Separator)))
		pkgs = append(pkgs, pkg)
		regen := "go generate ./" + pkg
		t.Run(pkg, func(t *testing.T) {
			args := generateArgs(t, vf)
			files, err := generate(dir, args, io.Discard)
			if err != nil {
				t.Fatalf("%s: %v", regen, err)
			}
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
				got, err := os.ReadFile(filepath.Join(dir, f.Name))
				if err != nil {
					t.Errorf("%s/%s: %v; run %s", pkg, f.Name, err, regen)
					continue
				}
				if !bytes.Equal(got, f.Data) {
					t.Errorf("%s/%s differs from what internal/gpudrv/gen gives (edit the templates or %s, never the z-file); run %s", pkg, f.Name, input, regen)
				}
			}
			zs, _ := filepath.Glob(filepath.Join(dir, "z*.go"))
			for _, z := range zs {
				if !slices.Contains(names, filepath.Base(z)) {
					t.Errorf("%s/%s is not generated any more; delete it", pkg, filepath.Base(z))
				}
			}
		})
	}
	for _, want := range []string{"drivers/cuda", "drivers/musa"} {
		if !slices.Contains(pkgs, want) {
			t.Errorf("%s/%s not found (found %q)", want, input, pkgs)
		}
	}
}

// generateArgs is the generator's arguments on vendor.go's go:generate line.
func generateArgs(t *testing.T, vendorFile string) []string {
	t.Helper()
	src, err := os.ReadFile(vendorFile)
	if err != nil {
		t.Fatal(err)
	}
	var found [][]string
	for line := range strings.Lines(string(src)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok {
			found = append(found, strings.Fields(rest))
		}
	}
	if len(found) != 1 || !slices.Equal(found[0][:min(len(found[0]), len(command))], command) {
		t.Fatalf("%s: want one line //go:generate %s -version N, found %q", vendorFile, strings.Join(command, " "), found)
	}
	return found[0][len(command):]
}

func TestReadVendorErrors(t *testing.T) {
	const ok = `package x
const EnvVar = "E"
const VisibleDevicesEnv = "V"
var vendor = &gpudrv.Vendor{Type: device.X, Pkg: "x", SymPrefix: "x", ErrPrefix: "X_", VisibleEnv: VisibleDevicesEnv, VersionBase: 1000}
func defaultSpec() dl.Spec { return dl.Spec{Name: "libx"} }
`
	v, err := readVendor([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if want := (vendor{Package: "x", Pkg: "x", Type: "X", Sym: "x", ErrPrefix: "X_", VisibleEnv: "V", Lib: "libx", VersionBase: 1000}); *v != want {
		t.Errorf("readVendor = %+v, want %+v", *v, want)
	}
	for _, tc := range []struct{ old, new, want string }{
		{`const EnvVar = "E"`, ``, "no string const EnvVar"},
		{`Pkg: "x", `, ``, "no field Pkg"},
		{`Type: device.X`, `Type: "x"`, "field Type: want device.Name"},
		{`VersionBase: 1000`, `VersionBase: 1050`, "want a multiple of 100"},
		{`VersionBase: 1000`, `VersionBase: base`, "field VersionBase: want a decimal integer literal"},
		{`VisibleEnv: VisibleDevicesEnv`, `VisibleEnv: other`, "field VisibleEnv: want a string literal or a const"},
		{`dl.Spec{Name: "libx"}`, `spec`, "want a gpudrv.Vendor and a dl.Spec"},
	} {
		_, err := readVendor([]byte(strings.Replace(ok, tc.old, tc.new, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("replacing %q: error %v, want one containing %q", tc.old, err, tc.want)
		}
	}
}
