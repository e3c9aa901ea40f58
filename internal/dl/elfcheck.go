package dl

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxDynEntries bounds the PT_DYNAMIC entries read for DT_FLAGS_1.
const maxDynEntries = 1 << 16

// hostClass is the ELF class of this process.
func hostClass() elf.Class {
	if strconv.IntSize == 64 {
		return elf.ELFCLASS64
	}
	return elf.ELFCLASS32
}

// hostData is the ELF byte order of this process.
func hostData() elf.Data {
	if littleEndianHost() {
		return elf.ELFDATA2LSB
	}
	return elf.ELFDATA2MSB
}

// checkELFFile checks, before anything maps it, that path is a regular file
// holding a well-formed shared object for this process (see checkELF).
// glibc's dlopen maps the segments a file's program headers describe and
// dies of SIGBUS when one lies past the end of a truncated file; nothing
// here maps or runs anything. Errors wrap ErrBadELF, or ErrOpen when the
// file cannot be read.
func checkELFFile(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrOpen, path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("%w: %s is not a regular file (mode %#o); point to the library file itself", ErrBadELF, path, st.Mode)
	}
	// O_NONBLOCK: should the file have been swapped for a FIFO since the
	// Lstat, opening it still returns at once (and fstat refuses it).
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrOpen, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrOpen, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (%v)", ErrBadELF, path, fi.Mode())
	}
	if err := checkELF(f, fi.Size()); err != nil {
		return fmt.Errorf("%w: %s: %v; reinstall the library (or point to the right file)", ErrBadELF, path, err)
	}
	return nil
}

// checkELF checks the ELF image r of size bytes: the identification (magic,
// class, byte order, version) matches this process, the type is ET_DYN and
// not a position-independent executable, the machine is this process's
// (where known), the program and section header tables and every segment's
// file range [Off, Off+Filesz) lie inside the file, and there is a loadable
// segment. It reads at most the headers and the PT_DYNAMIC segment.
func checkELF(r io.ReaderAt, size int64) error {
	var ident [elf.EI_NIDENT]byte
	if size < int64(len(ident)) {
		return fmt.Errorf("%d bytes, too short for an ELF header (truncated?)", size)
	}
	if _, err := r.ReadAt(ident[:], 0); err != nil {
		return fmt.Errorf("reading the ELF header: %v", err)
	}
	if string(ident[:4]) != elf.ELFMAG {
		return fmt.Errorf("not an ELF file (starts with %q)", ident[:4])
	}
	if c := elf.Class(ident[elf.EI_CLASS]); c != hostClass() {
		return fmt.Errorf("ELF class %v, but this process (GOARCH=%s) needs %v", c, runtime.GOARCH, hostClass())
	}
	if d := elf.Data(ident[elf.EI_DATA]); d != hostData() {
		return fmt.Errorf("byte order %v, but this process needs %v", d, hostData())
	}
	if v := elf.Version(ident[elf.EI_VERSION]); v != elf.EV_CURRENT {
		return fmt.Errorf("ELF version %v, want %v", v, elf.EV_CURRENT)
	}
	h, err := readHeader(r, size)
	if err != nil {
		return err
	}
	if h.typ != elf.ET_DYN {
		return fmt.Errorf("ELF type %v, not a shared library (ET_DYN)", h.typ)
	}
	if elfMachine != elf.EM_NONE && h.machine != elfMachine {
		return fmt.Errorf("built for %v, but this process (GOARCH=%s) runs on %v", h.machine, runtime.GOARCH, elfMachine)
	}
	if h.phnum == 0 {
		return fmt.Errorf("no program headers")
	}
	if h.phentsize != h.wantPhent {
		return fmt.Errorf("program header size %d, want %d", h.phentsize, h.wantPhent)
	}
	if !inFile(h.phoff, uint64(h.phnum)*uint64(h.phentsize), size) {
		return fmt.Errorf("program header table at %#x (%d entries) ends past the end of the file (%d bytes): truncated or corrupt", h.phoff, h.phnum, size)
	}
	if h.shoff != 0 {
		n := uint64(h.shnum)
		if n == 0 {
			n = 1 // the real count is in section 0's sh_size
		}
		if h.shentsize != h.wantShent {
			return fmt.Errorf("section header size %d, want %d", h.shentsize, h.wantShent)
		}
		if !inFile(h.shoff, n*uint64(h.shentsize), size) {
			return fmt.Errorf("section header table at %#x (%d entries) ends past the end of the file (%d bytes): truncated or corrupt", h.shoff, n, size)
		}
	}
	ef, err := elf.NewFile(r)
	if err != nil {
		return fmt.Errorf("malformed ELF: %v", err)
	}
	loads := 0
	for i, p := range ef.Progs {
		if !inFile(p.Off, p.Filesz, size) {
			return fmt.Errorf("segment %d (%v) covers [%#x, %#x+%#x) of the file, which has %d bytes: truncated or corrupt", i, p.Type, p.Off, p.Off, p.Filesz, size)
		}
		if p.Type == elf.PT_LOAD {
			loads++
		}
	}
	if loads == 0 {
		return fmt.Errorf("no loadable segment")
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_DYNAMIC && dynFlags1(ef, p)&uint64(elf.DF_1_PIE) != 0 {
			return fmt.Errorf("a position-independent executable (DF_1_PIE), not a shared library")
		}
	}
	return nil
}

// header is the part of the ELF header the checks use.
type header struct {
	typ                  elf.Type
	machine              elf.Machine
	phoff, shoff         uint64
	phentsize, phnum     uint16
	shentsize, shnum     uint16
	wantPhent, wantShent uint16
}

func readHeader(r io.ReaderAt, size int64) (header, error) {
	bo := byteOrder()
	sr := io.NewSectionReader(r, 0, size)
	if hostClass() == elf.ELFCLASS64 {
		var h elf.Header64
		if err := binary.Read(sr, bo, &h); err != nil {
			return header{}, fmt.Errorf("reading the ELF header: %v (truncated?)", err)
		}
		return header{elf.Type(h.Type), elf.Machine(h.Machine), h.Phoff, h.Shoff, h.Phentsize, h.Phnum, h.Shentsize, h.Shnum,
			uint16(binary.Size(elf.Prog64{})), uint16(binary.Size(elf.Section64{}))}, nil
	}
	var h elf.Header32
	if err := binary.Read(sr, bo, &h); err != nil {
		return header{}, fmt.Errorf("reading the ELF header: %v (truncated?)", err)
	}
	return header{elf.Type(h.Type), elf.Machine(h.Machine), uint64(h.Phoff), uint64(h.Shoff), h.Phentsize, h.Phnum, h.Shentsize, h.Shnum,
		uint16(binary.Size(elf.Prog32{})), uint16(binary.Size(elf.Section32{}))}, nil
}

func byteOrder() binary.ByteOrder {
	if littleEndianHost() {
		return binary.LittleEndian
	}
	return binary.BigEndian
}

// inFile reports whether [off, off+n) lies inside a file of size bytes,
// without overflowing.
func inFile(off, n uint64, size int64) bool {
	return size >= 0 && off <= uint64(size) && n <= uint64(size)-off
}

// dynFlags1 is the DT_FLAGS_1 value of the PT_DYNAMIC segment p (0 when
// absent or unreadable).
func dynFlags1(ef *elf.File, p *elf.Prog) uint64 {
	for _, e := range dynEntries(ef, p) {
		if elf.DynTag(e[0]) == elf.DT_FLAGS_1 {
			return e[1]
		}
	}
	return 0
}
