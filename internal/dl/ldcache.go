package dl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// The two layouts of /etc/ld.so.cache that glibc's ldconfig writes (see
// glibc's sysdeps/generic/dl-cache.h):
//
//   - new ("glibc-ld.so.cache1.1", glibc 2.32 and later by default): a
//     48-byte header (magic 17, version 3, nlibs 4, len_strings 4, flags 1,
//     padding 3, extension_offset 4, unused 12), nlibs 24-byte entries
//     (flags int32, key, value uint32, osversion uint32, hwcap uint64), then
//     the strings; key and value are offsets from the start of this header.
//   - old ("ld.so-1.7.0"): a 16-byte header (magic 11, padding 1, nlibs 4),
//     nlibs 12-byte entries (flags, key, value), then the strings, whose
//     offsets start after the last entry. ldconfig's "compat" format puts a
//     whole new-format cache, 8-byte aligned, right after the old entries;
//     glibc then reads the new one, and so does this reader.
const (
	cacheMagicOld  = "ld.so-1.7.0"
	cacheMagicNew  = "glibc-ld.so.cache1.1"
	cacheHeaderOld = 16
	cacheEntryOld  = 12
	cacheHeaderNew = 48
	cacheEntryNew  = 24

	// cacheEndianMask, cacheEndianLittle and cacheEndianBig are the
	// endianness bits of the new header's flags byte (0: unknown).
	cacheEndianMask   = 3
	cacheEndianLittle = 2
	cacheEndianBig    = 3

	// maxCacheSize bounds what is read of the cache file.
	maxCacheSize = 64 << 20
)

// errBadCache is wrapped by every error of parseLDCache.
var errBadCache = errors.New("not a usable ld.so.cache")

// cacheEntry is one library of the cache, its strings read.
type cacheEntry struct {
	Flags int32  // FLAG_ELF_LIBC6 | FLAG_X8664_LIB64, ...
	Key   string // the soname: "libcuda.so.1"
	Value string // the file: "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
	HWCap uint64 // 0 in the old format and for the baseline entry
}

// rawEntry is an entry as the file holds it: key and value are offsets
// into the string table.
type rawEntry struct {
	flags      int32
	key, value uint32
	hwcap      uint64
}

// ldCache is a parsed cache. Strings are read only when an entry is looked
// at, so a hostile file costs time linear in its size, never quadratic.
type ldCache struct {
	Format string // cacheMagicNew or cacheMagicOld
	strs   []byte // the string table: offsets are from its start
	raw    []rawEntry
}

// hostOrder is this process's byte order, which the cache is written in.
var hostOrder binary.ByteOrder = binary.NativeEndian

// littleEndianHost reports whether this process is little-endian.
func littleEndianHost() bool { return hostOrder.Uint16([]byte{1, 0}) == 1 }

// readLDCache reads and parses the cache at path. A missing file is
// (nil, nil): a machine without a cache simply has no cache entries. The
// answer is kept for the file it was read from (ldCaches), so that the
// searches of one process parse the cache once, not once per library.
func readLDCache(path string) (*ldCache, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadCache, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadCache, err)
	}
	// Dev and Ino are narrower than 64 bits on some Linux ports.
	id := cacheFileID{uint64(st.Dev), uint64(st.Ino), st.Size, st.Mtim, st.Ctim}
	if e, ok := ldCaches.get(path, id); ok {
		return e.c, e.err
	}
	c, err := readOpenLDCache(path, f)
	ldCaches.put(path, id, c, err)
	return c, err
}

// readOpenLDCache reads and parses the cache open as f.
func readOpenLDCache(path string, f *os.File) (*ldCache, error) {
	data, err := readOpenBounded(f, path, maxCacheSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadCache, err)
	}
	c, err := parseLDCache(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// cacheFileID tells one version of a cache file from another: ldconfig
// writes a new file and renames it over the old one (a new inode), and an
// edit in place changes the size or the times.
type cacheFileID struct {
	dev, ino   uint64
	size       int64
	mtim, ctim unix.Timespec
}

// ldCaches is this process's parsed caches by path, each with the file it
// was read from: flagshim list searches for about 24 libraries, and
// reading and parsing the cache for each was a third of its CPU time. A
// parsed cache is never changed after parseLDCache, so readers share it.
var ldCaches parsedCaches

type parsedCaches struct {
	mu sync.Mutex
	m  map[string]parsedCache
}

type parsedCache struct {
	id  cacheFileID
	c   *ldCache
	err error
}

func (p *parsedCaches) get(path string, id cacheFileID) (parsedCache, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e, ok := p.m[path]
	return e, ok && e.id == id
}

func (p *parsedCaches) put(path string, id cacheFileID, c *ldCache, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]parsedCache{}
	}
	p.m[path] = parsedCache{id, c, err}
}

// parseLDCache parses a cache in either layout. It never reads outside
// data: every count and offset is checked against its length first.
func parseLDCache(data []byte) (*ldCache, error) {
	switch {
	case bytes.HasPrefix(data, []byte(cacheMagicNew)):
		return parseNewCache(data)
	case bytes.HasPrefix(data, []byte(cacheMagicOld)):
		if len(data) < cacheHeaderOld {
			return nil, fmt.Errorf("%w: %d bytes, shorter than the old header", errBadCache, len(data))
		}
		n := uint64(hostOrder.Uint32(data[12:16]))
		if n > uint64(len(data)-cacheHeaderOld)/cacheEntryOld {
			return nil, fmt.Errorf("%w: %d entries do not fit in %d bytes", errBadCache, n, len(data))
		}
		end := cacheHeaderOld + int(n)*cacheEntryOld
		if newAt := (end + 7) &^ 7; newAt+cacheHeaderNew <= len(data) && bytes.HasPrefix(data[newAt:], []byte(cacheMagicNew)) {
			return parseNewCache(data[newAt:])
		}
		c := &ldCache{Format: cacheMagicOld, strs: data[end:], raw: make([]rawEntry, n)}
		for i := range c.raw {
			e := data[cacheHeaderOld+i*cacheEntryOld:]
			c.raw[i] = rawEntry{int32(hostOrder.Uint32(e[0:4])), hostOrder.Uint32(e[4:8]), hostOrder.Uint32(e[8:12]), 0}
		}
		return c, nil
	default:
		head := data[:min(len(data), len(cacheMagicNew))]
		return nil, fmt.Errorf("%w: starts with %q, neither %q nor %q", errBadCache, head, cacheMagicNew, cacheMagicOld)
	}
}

// parseNewCache parses a new-format cache starting at data[0].
func parseNewCache(data []byte) (*ldCache, error) {
	if len(data) < cacheHeaderNew {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", errBadCache, len(data))
	}
	if flags := data[28]; flags != 0 {
		want := byte(cacheEndianBig)
		if littleEndianHost() {
			want = cacheEndianLittle
		}
		if flags&cacheEndianMask != want {
			return nil, fmt.Errorf("%w: written for another byte order (flags %#x)", errBadCache, flags)
		}
	}
	n := uint64(hostOrder.Uint32(data[20:24]))
	if n > uint64(len(data)-cacheHeaderNew)/cacheEntryNew {
		return nil, fmt.Errorf("%w: %d entries do not fit in %d bytes", errBadCache, n, len(data))
	}
	c := &ldCache{Format: cacheMagicNew, strs: data, raw: make([]rawEntry, n)}
	for i := range c.raw {
		e := data[cacheHeaderNew+i*cacheEntryNew:]
		c.raw[i] = rawEntry{int32(hostOrder.Uint32(e[0:4])), hostOrder.Uint32(e[4:8]), hostOrder.Uint32(e[8:12]), hostOrder.Uint64(e[16:24])}
	}
	return c, nil
}

// entries reads every entry's strings, in file order; skipped counts the
// entries whose strings lie outside the file (glibc ignores those too).
func (c *ldCache) entries() (es []cacheEntry, skipped int) {
	for _, r := range c.raw {
		k, ok1 := cString(c.strs, r.key)
		v, ok2 := cString(c.strs, r.value)
		if !ok1 || !ok2 {
			skipped++
			continue
		}
		es = append(es, cacheEntry{Flags: r.flags, Key: k, Value: v, HWCap: r.hwcap})
	}
	return es, skipped
}

// cString is the NUL-terminated string at off in b, of at most MaxCString
// bytes; false when off is outside b or no NUL ends it in time.
func cString(b []byte, off uint32) (string, bool) {
	if uint64(off) >= uint64(len(b)) {
		return "", false
	}
	rest := b[off:]
	n := bytes.IndexByte(rest[:min(len(rest), MaxCString+1)], 0)
	if n < 0 {
		return "", false
	}
	return string(rest[:n]), true
}

// keyIs reports whether the string at off in b is name.
func keyIs(b []byte, off uint32, name string) bool {
	if uint64(off) >= uint64(len(b)) {
		return false
	}
	rest := b[off:]
	return len(rest) > len(name) && rest[len(name)] == 0 && string(rest[:len(name)]) == name
}

// lookup returns the file the dynamic loader would take from the cache for
// soname, or "": the first entry with that key whose flags this machine's
// loader accepts (cacheFlagsOK) and that is a baseline entry (hwcap 0).
// Entries for glibc-hwcaps subfolders (x86-64-v3, ...) and legacy hwcap
// folders are not chosen: picking among them needs the CPU's features, so
// the baseline copy that every such install also carries is used.
func (c *ldCache) lookup(soname string) string {
	if c == nil {
		return ""
	}
	best := ""
	for _, r := range c.raw {
		if !keyIs(c.strs, r.key, soname) || !cacheFlagsOK(r.flags) || r.hwcap != 0 {
			continue
		}
		v, ok := cString(c.strs, r.value)
		if !ok {
			continue
		}
		if r.flags == cacheDefaultID {
			return v
		}
		if best == "" {
			best = v // FLAG_ELF: glibc keeps looking for a default-id one
		}
	}
	return best
}
