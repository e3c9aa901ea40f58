package dl_test

import (
	"bytes"
	"debug/elf"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/internal/dl"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// badELF are the broken library files of TestBadELFRefused and the reason
// each must be refused with.
var badELF = map[string]string{
	"truncated":   "truncated or corrupt",
	"no-sections": "section header table",
	"random":      "not an ELF file",
	"machine":     "built for",
	"class":       "ELF class ELFCLASS",
	"exec":        "ELF type ET_EXEC, not a shared library",
	"pie":         "position-independent executable",
	"fifo":        "not a regular file",
	"folder":      "not a regular file",
}

// TestBadELFRefused: files that would crash glibc's dlopen (SIGBUS on a
// truncated segment) or are no library of this process are refused before
// dlopen, as an override and when searched. The opening runs in a child,
// so that a regression that crashes cannot take this test binary down.
func TestBadELFRefused(t *testing.T) {
	if dltest.IsChild(t) {
		root := os.Getenv("BAD_ROOT")
		var dirs []string
		for name, reason := range badELF {
			p := filepath.Join(root, name, soname)
			dirs = append(dirs, filepath.Dir(p))
			_, err := dl.Open(spec(env(map[string]string{"FLAGOS_LIBDLTEST_PATH": p})))
			require.Error(t, err, name)
			assert.ErrorIs(t, err, dl.ErrBadELF, name)
			assert.Contains(t, err.Error(), reason, name)
		}
		// Searched: each is skipped with its reason, the good one opens.
		good := os.Getenv("GOOD")
		lib, err := dl.Open(spec(env(nil), append(dirs, filepath.Dir(good))...))
		require.NoError(t, err)
		assert.Equal(t, good, lib.Path)
		bad := 0
		for _, a := range lib.Attempts {
			if a.From == dl.FromDirs && a.Err != nil {
				assert.ErrorIs(t, a.Err, dl.ErrBadELF, a.Path)
				bad++
			}
		}
		assert.Equal(t, len(badELF), bad)
		return
	}

	dir := dltest.PrivateDir(t)
	good := buildIn(t, filepath.Join(dir, "good"))
	img, err := os.ReadFile(good)
	require.NoError(t, err)
	put := func(name string, data []byte) {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name, soname), data, 0o755))
	}
	put("truncated", img[:len(img)/2])
	ef, err := elf.NewFile(bytes.NewReader(img))
	require.NoError(t, err)
	end := uint64(0)
	for _, p := range ef.Progs {
		end = max(end, p.Off+p.Filesz)
	}
	require.Less(t, end, uint64(len(img)), "the section headers follow the segments")
	put("no-sections", img[:end])
	random := make([]byte, 8192)
	rand.New(rand.NewSource(7)).Read(random)
	put("random", random)
	other := elf.EM_AARCH64
	if runtime.GOARCH == "arm64" {
		other = elf.EM_X86_64
	}
	m := bytes.Clone(img)
	ef.ByteOrder.PutUint16(m[18:], uint16(other))
	put("machine", m)
	c := bytes.Clone(img)
	c[elf.EI_CLASS] ^= byte(elf.ELFCLASS32) ^ byte(elf.ELFCLASS64) // the other class
	put("class", c)
	for name, flag := range map[string]string{"exec": "-no-pie", "pie": "-pie"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
		exe := filepath.Join(dir, name, soname)
		dltest.BuildExe(t, exe, []string{dltest.Abs(t, "testdata/main.c")}, flag)
		if name == "pie" {
			x, err := elf.Open(exe)
			require.NoError(t, err)
			require.Equal(t, elf.ET_DYN, x.Type, "a PIE is ET_DYN, as a library is")
			x.Close()
		}
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "fifo"), 0o755))
	require.NoError(t, unix.Mkfifo(filepath.Join(dir, "fifo", soname), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "folder", soname), 0o755))

	out := dltest.MustChild(t, t.Name(), "BAD_ROOT="+dir, "GOOD="+good)
	assert.False(t, strings.Contains(out, "SIGBUS"), out)
}
