package dl

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"math/rand"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// minimalELF builds by hand the smallest shared object checkELF accepts on
// a 64-bit host: an ELF header, a PT_LOAD covering the whole file and a
// PT_DYNAMIC holding DT_FLAGS_1 = flags1 and DT_NULL.
func minimalELF(flags1 uint64) []byte {
	const ehsize, phsize, dynsize = 64, 56, 32
	size := uint64(ehsize + 2*phsize + dynsize)
	bo := byteOrder()
	var b bytes.Buffer
	h := elf.Header64{
		Type: uint16(elf.ET_DYN), Machine: uint16(elfMachine), Version: uint32(elf.EV_CURRENT),
		Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 2, Shentsize: 64,
	}
	copy(h.Ident[:], elf.ELFMAG)
	h.Ident[elf.EI_CLASS] = byte(elf.ELFCLASS64)
	h.Ident[elf.EI_DATA] = byte(hostData())
	h.Ident[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	_ = binary.Write(&b, bo, h)
	_ = binary.Write(&b, bo, elf.Prog64{Type: uint32(elf.PT_LOAD), Flags: uint32(elf.PF_R), Off: 0, Filesz: size, Memsz: size, Align: 0x1000})
	dynOff := uint64(ehsize + 2*phsize)
	_ = binary.Write(&b, bo, elf.Prog64{Type: uint32(elf.PT_DYNAMIC), Flags: uint32(elf.PF_R), Off: dynOff, Vaddr: dynOff, Filesz: dynsize, Memsz: dynsize, Align: 8})
	_ = binary.Write(&b, bo, [4]uint64{uint64(elf.DT_FLAGS_1), flags1, uint64(elf.DT_NULL), 0})
	return b.Bytes()
}

func check(b []byte) error { return checkELF(bytes.NewReader(b), int64(len(b))) }

func TestCheckELFMinimal(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the hand-built fixture is a 64-bit ELF; the built fixtures cover this host")
	}
	good := minimalELF(0)
	require.NoError(t, check(good))

	edit := func(f func(b []byte)) []byte { b := bytes.Clone(good); f(b); return b }
	bo := byteOrder()
	otherMachine := elf.EM_AARCH64
	if elfMachine == elf.EM_AARCH64 {
		otherMachine = elf.EM_X86_64
	}
	random := make([]byte, 4096)
	rand.New(rand.NewSource(1)).Read(random)
	for _, c := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "too short"},
		{"short", good[:10], "too short"},
		{"random bytes", random, "not an ELF file"},
		{"header only", good[:64], "program header table"},
		{"truncated by one byte", good[:len(good)-1], "segment 0 (PT_LOAD)"},
		{"wrong class", edit(func(b []byte) { b[elf.EI_CLASS] = byte(elf.ELFCLASS32) }), "ELF class ELFCLASS32"},
		{"wrong byte order", edit(func(b []byte) { b[elf.EI_DATA] ^= 3 }), "byte order"},
		{"wrong version", edit(func(b []byte) { b[elf.EI_VERSION] = 7 }), "ELF version"},
		{"executable", edit(func(b []byte) { bo.PutUint16(b[16:], uint16(elf.ET_EXEC)) }), "ELF type ET_EXEC, not a shared library"},
		{"relocatable", edit(func(b []byte) { bo.PutUint16(b[16:], uint16(elf.ET_REL)) }), "ET_REL"},
		{"wrong machine", edit(func(b []byte) { bo.PutUint16(b[18:], uint16(otherMachine)) }), "built for " + otherMachine.String()},
		{"phoff past the end", edit(func(b []byte) { bo.PutUint64(b[32:], 1<<40) }), "program header table"},
		{"phoff overflowing", edit(func(b []byte) { bo.PutUint64(b[32:], ^uint64(0)-8) }), "program header table"},
		{"no program headers", edit(func(b []byte) { bo.PutUint16(b[56:], 0) }), "no program headers"},
		{"odd phentsize", edit(func(b []byte) { bo.PutUint16(b[54:], 32) }), "program header size"},
		{"shoff past the end", edit(func(b []byte) { bo.PutUint64(b[40:], uint64(len(good))); bo.PutUint16(b[60:], 3) }), "section header table"},
		{"segment past the end", edit(func(b []byte) { bo.PutUint64(b[64+32:], 1<<20) }), "segment 0 (PT_LOAD)"},
		{"segment offset overflowing", edit(func(b []byte) { bo.PutUint64(b[64+8:], ^uint64(0)) }), "malformed ELF"},
		{"no PT_LOAD", edit(func(b []byte) { bo.PutUint32(b[64:], uint32(elf.PT_NOTE)) }), "no loadable segment"},
		{"position-independent executable", minimalELF(uint64(elf.DF_1_PIE)), "position-independent executable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := check(c.data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	assert.NoError(t, check(minimalELF(uint64(elf.DF_1_NOW))), "other DT_FLAGS_1 bits are fine")
}

func TestInFile(t *testing.T) {
	assert.True(t, inFile(0, 10, 10))
	assert.True(t, inFile(10, 0, 10))
	assert.False(t, inFile(10, 1, 10))
	assert.False(t, inFile(11, 0, 10))
	assert.False(t, inFile(1, ^uint64(0), 10), "no overflow")
	assert.False(t, inFile(0, 0, -1))
}

// FuzzCheckELF: arbitrary bytes as a library file never panic the check,
// and what it accepts has its segments inside the file.
func FuzzCheckELF(f *testing.F) {
	if strconv.IntSize == 64 {
		f.Add(minimalELF(0))
		f.Add(minimalELF(uint64(elf.DF_1_PIE)))
	}
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if check(data) != nil {
			return
		}
		ef, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("accepted, but debug/elf says %v", err)
		}
		for _, p := range ef.Progs {
			if !inFile(p.Off, p.Filesz, int64(len(data))) {
				t.Fatalf("accepted a segment past the end: %+v", p.ProgHeader)
			}
		}
		if ef.Type != elf.ET_DYN {
			t.Fatalf("accepted type %v", ef.Type)
		}
	})
}
