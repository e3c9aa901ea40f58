package dl

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// $ORIGIN. The loader expands $ORIGIN in a library's RUNPATH, RPATH and
// NEEDED entries to the folder of the name it was loaded by; loaded through
// /proc/self/fd/N, that is /proc/self/fd, and the library's own
// dependencies (ROCm's libamdhip64 beside libamd_comgr, a pip wheel's
// libraries) are not found. Such a library is loaded by the path the chain
// check resolved instead (every link followed, every folder on the way
// writable by root and the user only, so nobody else can change it in
// between), and afterwards the file the loader mapped is proven to be the
// file checked (its device and inode, from /proc/self/maps); one that is
// not is closed and refused, its constructor having run: only root or the
// user could have swapped it, whom the loader cannot stop anyway.

// maxDynString bounds the bytes of the dynamic string table read.
const maxDynString = 1 << 20

// usesOrigin reports whether the ELF image r (checked by checkELF) names
// $ORIGIN in a RUNPATH, RPATH or NEEDED entry. An image whose dynamic
// section cannot be read says no.
func usesOrigin(r io.ReaderAt) bool {
	ef, err := elf.NewFile(r)
	if err != nil {
		return false
	}
	var strtab, strsz uint64
	var offs []uint64
	for _, p := range ef.Progs {
		if p.Type != elf.PT_DYNAMIC {
			continue
		}
		for _, e := range dynEntries(ef, p) {
			switch elf.DynTag(e[0]) {
			case elf.DT_STRTAB:
				strtab = e[1]
			case elf.DT_STRSZ:
				strsz = e[1]
			case elf.DT_RUNPATH, elf.DT_RPATH, elf.DT_NEEDED:
				offs = append(offs, e[1])
			}
		}
	}
	if len(offs) == 0 || strsz == 0 {
		return false
	}
	strsz = min(strsz, maxDynString)
	for _, p := range ef.Progs { // the string table's file offset, through its segment
		if p.Type != elf.PT_LOAD || strtab < p.Vaddr || strtab-p.Vaddr >= p.Filesz {
			continue
		}
		n := min(strsz, p.Filesz-(strtab-p.Vaddr))
		buf := make([]byte, n)
		if _, err := p.ReadAt(buf, int64(strtab-p.Vaddr)); err != nil {
			return false
		}
		for _, o := range offs {
			if o >= uint64(len(buf)) {
				continue
			}
			s := buf[o:]
			if i := bytes.IndexByte(s, 0); i >= 0 {
				s = s[:i]
			}
			if bytes.Contains(s, []byte("$ORIGIN")) || bytes.Contains(s, []byte("${ORIGIN}")) {
				return true
			}
		}
		return false
	}
	return false
}

// dynEntries are the (tag, value) pairs of the PT_DYNAMIC segment p, up to
// DT_NULL (at most maxDynEntries).
func dynEntries(ef *elf.File, p *elf.Prog) [][2]uint64 {
	entSize := uint64(16)
	if ef.Class == elf.ELFCLASS32 {
		entSize = 8
	}
	n := min(p.Filesz/entSize, maxDynEntries)
	buf := make([]byte, n*entSize)
	if _, err := p.ReadAt(buf, 0); err != nil {
		return nil
	}
	var out [][2]uint64
	bo := ef.ByteOrder
	for b := bytes.NewReader(buf); b.Len() >= int(entSize); {
		var tag, val uint64
		if entSize == 16 {
			var e [2]uint64
			_ = binary.Read(b, bo, &e)
			tag, val = e[0], e[1]
		} else {
			var e [2]uint32
			_ = binary.Read(b, bo, &e)
			tag, val = uint64(e[0]), uint64(e[1])
		}
		if elf.DynTag(tag) == elf.DT_NULL {
			break
		}
		out = append(out, [2]uint64{tag, val})
	}
	return out
}

// loadResolved dlopens real, the path the chain check resolved (no link
// left), for a library that needs $ORIGIN, then proves the file mapped is
// the one checked (want's device and inode).
func (s *search) loadResolved(p, real string, want fileID) (uintptr, error) {
	h, err := dlopen(real, s.mode)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrOpen, p, err)
	}
	got, err := mappedFile(h)
	if err != nil {
		_ = dlclose(h)
		return 0, fmt.Errorf("%w: %s was loaded by its path (it needs $ORIGIN), but which file the loader mapped cannot be told: %v; nothing of it is used", ErrOpen, real, err)
	}
	if got != want {
		_ = dlclose(h)
		return 0, fmt.Errorf("%w: %s was replaced while it was being loaded (it needs $ORIGIN, so it is loaded by its path): the file mapped is not the one checked; nothing of it is used", ErrUnsafePath, real)
	}
	return h, nil
}

// mappedFile is the device and inode of the file the loader mapped for h:
// the mapping that holds the object's dynamic section (link_map's l_ld),
// in /proc/self/maps.
func mappedFile(h uintptr) (fileID, error) {
	fn := dlinfoAddr()
	if fn == 0 {
		return fileID{}, fmt.Errorf("no dlinfo")
	}
	lm, ok := linkMap(fn, h)
	if !ok {
		return fileID{}, fmt.Errorf("dlinfo failed")
	}
	// struct link_map { ElfW(Addr) l_addr; char *l_name; ElfW(Dyn) *l_ld; ... }
	ld := *(*uintptr)(unsafe.Add(ptr(lm), 2*unsafe.Sizeof(uintptr(0))))
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return fileID{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// start-end perms offset major:minor inode path
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || uint64(ld) < start || uint64(ld) >= end {
			continue
		}
		maj, mnr, ok := strings.Cut(fields[3], ":")
		major, err1 := strconv.ParseUint(maj, 16, 32)
		minor, err2 := strconv.ParseUint(mnr, 16, 32)
		ino, err3 := strconv.ParseUint(fields[4], 10, 64)
		if !ok || err1 != nil || err2 != nil || err3 != nil || ino == 0 {
			return fileID{}, fmt.Errorf("the mapping of its dynamic section names no file")
		}
		return fileID{uint64(unix.Mkdev(uint32(major), uint32(minor))), ino}, nil
	}
	return fileID{}, fmt.Errorf("its dynamic section is in no mapping")
}
