"""The ELF check the Go loader makes before it opens a library
(internal/dl/elfcheck.go), for _lib.check: a library is refused unless it
is a well-formed shared object of this process's class, byte order and
machine. Only the headers, the program header table and the dynamic
section's entries are read; nothing is mapped or run."""

import posix
import sys

# typing is for type checkers only (issue 40: a host's start); the machine
# is uname's (what platform.machine() returns, without importing platform),
# from posix, os's C part: os and struct cost a host's start too (issue 40),
# so the fields are read with int.from_bytes.
# The annotations that name its types are strings: `from __future__ import
# annotations` would cost an import of __future__ (issue 40).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Callable, List, Optional, Tuple

# ELF: the identification's offsets and values, e_type ET_DYN, and names of
# the types and machines a message may show.
_ELFCLASS = {0: "ELFCLASSNONE", 1: "ELFCLASS32", 2: "ELFCLASS64"}
_ELFDATA = {0: "ELFDATANONE", 1: "ELFDATA2LSB", 2: "ELFDATA2MSB"}
_ET = {0: "ET_NONE", 1: "ET_REL", 2: "ET_EXEC", 3: "ET_DYN", 4: "ET_CORE"}
_EM = {3: "EM_386", 8: "EM_MIPS", 20: "EM_PPC", 21: "EM_PPC64", 22: "EM_S390", 40: "EM_ARM", 62: "EM_X86_64",
       183: "EM_AARCH64", 243: "EM_RISCV", 258: "EM_LOONGARCH"}
# This process's machine where the Go loader knows it (internal/dl/arch_*.go);
# elsewhere any machine passes.
_HOST_EM = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183}

# Program header types a message may name, DT_FLAGS_1 and its DF_1_PIE bit,
# and the bound on the PT_DYNAMIC entries read (internal/dl/elfcheck.go).
_PT = {0: "PT_NULL", 1: "PT_LOAD", 2: "PT_DYNAMIC", 3: "PT_INTERP", 4: "PT_NOTE", 5: "PT_SHLIB", 6: "PT_PHDR",
       7: "PT_TLS", 0x6474E550: "PT_GNU_EH_FRAME", 0x6474E551: "PT_GNU_STACK", 0x6474E552: "PT_GNU_RELRO",
       0x6474E553: "PT_GNU_PROPERTY"}
_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_FLAGS_1, _DF_1_PIE = 0, 0x6FFFFFFB, 0x08000000
_MAX_DYN_ENTRIES = 1 << 16


def _fields(b: bytes, off: int, sizes: "Tuple[int, ...]", order: str) -> "List[int]":
    """The unsigned fields of sizes bytes each, one after the other from off
    in b, in byte order order ("little" or "big"): struct.unpack's answer for
    a format of H, I and Q with no padding. b holds them all (the callers
    check its length first)."""
    out = []
    for n in sizes:
        out.append(int.from_bytes(b[off:off + n], order))
        off += n
    return out


def why(head: bytes, size: int, read: "Callable[[int, int], bytes]") -> "Optional[str]":
    """Why a file of size bytes whose first 64 are head, the rest read with
    read(offset, n), is not a well-formed ELF shared object for this
    process; None when it is. It checks the identification (magic, class,
    byte order, version), the type (ET_DYN), the machine (where known), that
    the program and section header tables and every segment lie inside the
    file, that one segment at least is loadable, and that the dynamic
    section does not mark a position-independent executable (DF_1_PIE)."""
    bits = 64 if sys.maxsize > 2**32 else 32  # the pointer's size
    host_class, host_data = (2 if bits == 64 else 1), (1 if sys.byteorder == "little" else 2)
    host_em = _HOST_EM.get(posix.uname().machine.lower()) if bits == 64 else None
    ehdr, phent, shent = (64, 56, 64) if host_class == 2 else (52, 32, 40)
    if size < 16 or len(head) < 16:
        return f"{size} bytes, too short for an ELF header (truncated?)"
    if head[:4] != b"\x7fELF":
        return f"not an ELF file (starts with {head[:4]!r})"
    if head[4] != host_class:
        return (f"ELF class {_ELFCLASS.get(head[4], head[4])}, but this process ({bits}-bit Python) needs "
                f"{_ELFCLASS[host_class]}")
    if head[5] != host_data:
        return f"byte order {_ELFDATA.get(head[5], head[5])}, but this process needs {_ELFDATA[host_data]}"
    if head[6] != 1:
        return f"ELF version {head[6]}, want EV_CURRENT (1)"
    if len(head) < ehdr:
        return f"{size} bytes, too short for an ELF header (truncated?)"
    order = sys.byteorder  # host_data's
    word = 8 if host_class == 2 else 4
    (typ, machine, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, _) = _fields(
        head, 16, (2, 2, 4, word, word, word, 4, 2, 2, 2, 2, 2, 2), order)
    if typ != 3:
        return f"ELF type {_ET.get(typ, typ)}, not a shared library (ET_DYN)"
    if host_em is not None and machine != host_em:
        return (f"built for {_EM.get(machine, machine)}, but this process ({posix.uname().machine}) runs on "
                f"{_EM[host_em]}")
    if phnum == 0:
        return "no program headers"
    if phentsize != phent:
        return f"program header size {phentsize}, want {phent}"
    if phoff > size or phnum * phentsize > size - phoff:
        return (f"program header table at {phoff:#x} ({phnum} entries) ends past the end of the file "
                f"({size} bytes): truncated or corrupt")
    if shoff:
        n = shnum or 1  # the real count is in section 0's sh_size
        if shentsize != shent:
            return f"section header size {shentsize}, want {shent}"
        if shoff > size or n * shentsize > size - shoff:
            return (f"section header table at {shoff:#x} ({n} entries) ends past the end of the file "
                    f"({size} bytes): truncated or corrupt")
    return _segments(read, size, order, host_class == 2, phoff, phnum, phent)


def _segments(read: "Callable[[int, int], bytes]", size: int, order: str, wide: bool, phoff: int, phnum: int,
              phent: int) -> "Optional[str]":
    """Why the program headers (phnum of phent bytes at phoff; wide: ELF64)
    do not describe a shared library inside the file; None when they do."""
    table = read(phoff, phnum * phent)
    if len(table) < phnum * phent:
        return f"program header table at {phoff:#x} is cut short: truncated or corrupt"
    progs = []  # (p_type, p_offset, p_filesz)
    for i in range(phnum):
        e = table[i * phent:(i + 1) * phent]
        if wide:
            typ, _, off, _, _, filesz = _fields(e, 0, (4, 4, 8, 8, 8, 8), order)
        else:
            typ, off, _, _, filesz = _fields(e, 0, (4, 4, 4, 4, 4), order)
        if off > size or filesz > size - off:
            return (f"segment {i} ({_PT.get(typ, hex(typ))}) covers [{off:#x}, {off:#x}+{filesz:#x}) of the "
                    f"file, which has {size} bytes: truncated or corrupt")
        progs.append((typ, off, filesz))
    if not any(typ == _PT_LOAD for typ, _, _ in progs):
        return "no loadable segment"
    for typ, off, filesz in progs:
        if typ == _PT_DYNAMIC and _dyn_flags1(read, order, wide, off, filesz) & _DF_1_PIE:
            return "a position-independent executable (DF_1_PIE), not a shared library"
    return None


def _dyn_flags1(read: "Callable[[int, int], bytes]", order: str, wide: bool, off: int, filesz: int) -> int:
    """DT_FLAGS_1 of the PT_DYNAMIC segment at off (0 when absent), reading
    at most _MAX_DYN_ENTRIES entries."""
    ent = 16 if wide else 8
    buf = read(off, min(filesz // ent, _MAX_DYN_ENTRIES) * ent)
    half = ent // 2
    for i in range(len(buf) // ent):
        tag, val = _fields(buf, i * ent, (half, half), order)
        if tag == _DT_NULL:
            return 0
        if tag == _DT_FLAGS_1:
            return val
    return 0
