package dl

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildCache writes an ld.so.cache image by hand, in the layouts glibc's
// ldconfig writes (see ldcache.go): "new", "old" or "compat".
func buildCache(format string, entries []cacheEntry) []byte {
	n := len(entries)
	var strs bytes.Buffer
	keyAt, valAt := make([]int, n), make([]int, n)
	for i, e := range entries {
		keyAt[i] = strs.Len()
		strs.WriteString(e.Key + "\x00")
		valAt[i] = strs.Len()
		strs.WriteString(e.Value + "\x00")
	}
	u32 := func(b *bytes.Buffer, v uint32) { var x [4]byte; hostOrder.PutUint32(x[:], v); b.Write(x[:]) }
	u64 := func(b *bytes.Buffer, v uint64) { var x [8]byte; hostOrder.PutUint64(x[:], v); b.Write(x[:]) }
	newPart := func(strBase int) []byte { // strBase: offset of the strings from this header
		var b bytes.Buffer
		b.WriteString(cacheMagicNew)
		u32(&b, uint32(n))
		u32(&b, uint32(strs.Len()))
		flags := byte(cacheEndianBig)
		if littleEndianHost() {
			flags = cacheEndianLittle
		}
		b.Write([]byte{flags, 0, 0, 0})
		b.Write(make([]byte, 16)) // extension_offset, unused[3]
		for i, e := range entries {
			u32(&b, uint32(e.Flags))
			u32(&b, uint32(strBase+keyAt[i]))
			u32(&b, uint32(strBase+valAt[i]))
			u32(&b, 0)
			u64(&b, e.HWCap)
		}
		return b.Bytes()
	}
	oldPart := func(strBase int) []byte { // strBase: offset of the strings from the old string table
		var b bytes.Buffer
		b.WriteString(cacheMagicOld)
		b.WriteByte(0)
		u32(&b, uint32(n))
		for i, e := range entries {
			u32(&b, uint32(e.Flags))
			u32(&b, uint32(strBase+keyAt[i]))
			u32(&b, uint32(strBase+valAt[i]))
		}
		return b.Bytes()
	}
	var out []byte
	switch format {
	case "new":
		out = append(newPart(cacheHeaderNew+n*cacheEntryNew), strs.Bytes()...)
	case "old":
		out = append(oldPart(0), strs.Bytes()...)
	case "compat":
		oldEnd := cacheHeaderOld + n*cacheEntryOld
		newAt := (oldEnd + 7) &^ 7
		strAt := newAt + cacheHeaderNew + n*cacheEntryNew
		out = oldPart(strAt - oldEnd)
		out = append(out, make([]byte, newAt-oldEnd)...)
		out = append(out, newPart(strAt-newAt)...)
		out = append(out, strs.Bytes()...)
	default:
		panic("unknown cache format " + format)
	}
	return out
}

var sampleEntries = []cacheEntry{
	{Flags: cacheDefaultID, Key: "libcuda.so.1", Value: "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
	{Flags: 0x0003, Key: "libcuda.so.1", Value: "/usr/lib/i386-linux-gnu/libcuda.so.1"},
	{Flags: cacheDefaultID, Key: "libc.so.6", Value: "/lib/x86_64-linux-gnu/libc.so.6"},
}

func TestParseLDCacheFormats(t *testing.T) {
	for _, format := range []string{"new", "old", "compat"} {
		t.Run(format, func(t *testing.T) {
			c, err := parseLDCache(buildCache(format, sampleEntries))
			require.NoError(t, err)
			want := cacheMagicNew
			if format == "old" {
				want = cacheMagicOld
			}
			assert.Equal(t, want, c.Format, "compat is read through its new part, as glibc does")
			es, skipped := c.entries()
			assert.Equal(t, sampleEntries, es)
			assert.Zero(t, skipped)
			assert.Equal(t, "/lib/x86_64-linux-gnu/libc.so.6", c.lookup("libc.so.6"))
			assert.Equal(t, "", c.lookup("libnope.so.1"))
		})
	}
}

func TestLDCacheLookupFlags(t *testing.T) {
	other := int32(0x0003) // i386 libc6 on x86-64; on arm64 also not the default
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skipf("flag table for %s is the generic fallback", runtime.GOARCH)
	}
	c, err := parseLDCache(buildCache("new", []cacheEntry{
		{Flags: other, Key: "libx.so.1", Value: "/lib32/libx.so.1"},
		{Flags: cacheDefaultID, Key: "libx.so.1", Value: "/opt/hwcaps/libx.so.1", HWCap: 1<<62 | 1},
		{Flags: cacheDefaultID, Key: "libx.so.1", Value: "/lib64/libx.so.1"},
		{Flags: cacheDefaultID, Key: "libx.so.1", Value: "/later/libx.so.1"},
		{Flags: other, Key: "liby.so.1", Value: "/lib32/liby.so.1"},
	}))
	require.NoError(t, err)
	assert.Equal(t, "/lib64/libx.so.1", c.lookup("libx.so.1"), "another architecture's and hwcaps entries are passed over; the first baseline one wins")
	assert.Equal(t, "", c.lookup("liby.so.1"), "only another architecture's copy: none")
	var nilCache *ldCache
	assert.Equal(t, "", nilCache.lookup("libx.so.1"))
}

func TestParseLDCacheBad(t *testing.T) {
	good := buildCache("new", sampleEntries)
	wrongEndian := bytes.Clone(good)
	wrongEndian[28] ^= 1 // little <-> big
	hugeCount := bytes.Clone(good)
	hostOrder.PutUint32(hugeCount[20:24], 1<<30)
	oldHuge := buildCache("old", sampleEntries)
	hostOrder.PutUint32(oldHuge[12:16], 1<<31)
	for name, data := range map[string][]byte{
		"empty":        nil,
		"other magic":  []byte("hello, world, this is not a cache at all"),
		"short new":    good[:cacheHeaderNew-1],
		"short old":    []byte(cacheMagicOld + "\x00\x01"),
		"wrong endian": wrongEndian,
		"huge count":   hugeCount,
		"old huge":     oldHuge,
	} {
		t.Run(name, func(t *testing.T) {
			c, err := parseLDCache(data)
			assert.ErrorIs(t, err, errBadCache)
			assert.Nil(t, c)
		})
	}

	// Offsets past the end: those entries are skipped, the rest kept.
	bad := bytes.Clone(good)
	hostOrder.PutUint32(bad[cacheHeaderNew+8:], uint32(len(bad)+10)) // entry 0's value
	c, err := parseLDCache(bad)
	require.NoError(t, err)
	es, skipped := c.entries()
	assert.Equal(t, 1, skipped)
	assert.Len(t, es, 2)
	assert.Equal(t, "/usr/lib/i386-linux-gnu/libcuda.so.1", bad2value(c, "libcuda.so.1"), "the broken entry is passed over")
	// An unterminated last string.
	c, err = parseLDCache(good[:len(good)-1])
	require.NoError(t, err)
	_, skipped = c.entries()
	assert.Equal(t, 1, skipped)
	// A string longer than MaxCString is no path.
	long := buildCache("new", []cacheEntry{{Flags: cacheDefaultID, Key: "libl.so.1", Value: "/" + strings.Repeat("x", MaxCString)}})
	c, err = parseLDCache(long)
	require.NoError(t, err)
	assert.Equal(t, "", c.lookup("libl.so.1"))
}

// bad2value is the value of the first entry of key, whatever its flags.
func bad2value(c *ldCache, key string) string {
	es, _ := c.entries()
	for _, e := range es {
		if e.Key == key {
			return e.Value
		}
	}
	return ""
}

// hostCacheCopy is /etc/ld.so.cache of the machine this package was written
// on (Debian 12, glibc 2.36, x86-64), kept as a fixture and fuzz seed.
const hostCacheCopy = "testdata/ldcache/debian12-amd64.cache"

func TestParseLDCacheHostCopy(t *testing.T) {
	data, err := os.ReadFile(hostCacheCopy)
	require.NoError(t, err)
	c, err := parseLDCache(data)
	require.NoError(t, err)
	assert.Equal(t, cacheMagicNew, c.Format)
	es, skipped := c.entries()
	assert.Zero(t, skipped)
	assert.Greater(t, len(es), 100)
	if runtime.GOARCH == "amd64" {
		assert.Equal(t, "/lib/x86_64-linux-gnu/libc.so.6", c.lookup("libc.so.6"))
	}
}

// TestParseLDCacheMatchesLdconfig reads this machine's cache and compares
// every entry with what `ldconfig -p` prints of it.
func TestParseLDCacheMatchesLdconfig(t *testing.T) {
	ldconfig, err := exec.LookPath("ldconfig")
	if err != nil {
		for _, p := range []string{"/sbin/ldconfig", "/usr/sbin/ldconfig"} {
			if _, err := os.Stat(p); err == nil {
				ldconfig = p
			}
		}
	}
	if ldconfig == "" {
		t.Skip("no ldconfig on this machine to compare with")
	}
	c, err := readLDCache(hostSystem.cache)
	require.NoError(t, err)
	if c == nil {
		t.Skipf("this machine has no %s", hostSystem.cache)
	}
	out, err := exec.Command(ldconfig, "-p").Output()
	require.NoError(t, err)
	line := regexp.MustCompile(`^\s+(\S+) \(([^)]*)\) => (\S+)$`)
	var want [][2]string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := line.FindStringSubmatch(sc.Text()); m != nil {
			want = append(want, [2]string{m[1], m[3]})
		}
	}
	var got [][2]string
	es, _ := c.entries()
	for _, e := range es {
		got = append(got, [2]string{e.Key, e.Value})
	}
	require.NotEmpty(t, want, "ldconfig -p printed no entries:\n%s", out)
	assert.Equal(t, want, got)
}

func FuzzLDCache(f *testing.F) {
	if data, err := os.ReadFile(hostCacheCopy); err == nil {
		f.Add(data)
	}
	for _, format := range []string{"new", "old", "compat"} {
		f.Add(buildCache(format, sampleEntries))
		f.Add(buildCache(format, nil))
	}
	f.Add([]byte(cacheMagicOld + "\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseLDCache(data)
		if err != nil {
			if c != nil {
				t.Fatal("a cache with an error")
			}
			return
		}
		es, skipped := c.entries()
		if len(es)+skipped > len(data)/cacheEntryOld {
			t.Fatalf("%d entries from %d bytes", len(es)+skipped, len(data))
		}
		for i, e := range es {
			if strings.IndexByte(e.Key, 0) >= 0 || strings.IndexByte(e.Value, 0) >= 0 || len(e.Key) > MaxCString || len(e.Value) > MaxCString {
				t.Fatalf("entry %q => %q", e.Key, e.Value)
			}
			if i < 8 { // lookup is linear: a few suffice
				if v := c.lookup(e.Key); v != "" && !strings.Contains(string(data), v+"\x00") {
					t.Fatalf("lookup(%q) = %q, not in the data", e.Key, v)
				}
			}
		}
	})
}

// A process parses a cache file once, whatever the number of searches, and
// reads it again once ldconfig has replaced it or it was edited in place;
// a bad file's error is kept too.
func TestReadLDCacheReused(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/ld.so.cache"
	write := func(value string) {
		t.Helper()
		tmp := path + ".new" // as ldconfig does: a new file renamed over the old
		require.NoError(t, os.WriteFile(tmp, buildCache("new", []cacheEntry{{Flags: 0x303, Key: "libcuda.so.1", Value: value}}), 0o644))
		require.NoError(t, os.Rename(tmp, path))
	}
	write("/a/libcuda.so.1")
	first, err := readLDCache(path)
	require.NoError(t, err)
	assert.Equal(t, "/a/libcuda.so.1", first.lookup("libcuda.so.1"))
	again, err := readLDCache(path)
	require.NoError(t, err)
	assert.Same(t, first, again, "the same file: parsed once")

	write("/b/libcuda.so.1")
	renamed, err := readLDCache(path)
	require.NoError(t, err)
	assert.Equal(t, "/b/libcuda.so.1", renamed.lookup("libcuda.so.1"), "a file renamed over it is read again")

	// In place, the same size: the change time tells.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	edited := bytes.Replace(data, []byte("/b/libcuda"), []byte("/c/libcuda"), 1)
	require.Len(t, edited, len(data))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(edited, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	future := time.Now().Add(time.Hour) // the ctime moves on with this too, whatever the clock's granularity
	require.NoError(t, os.Chtimes(path, future, future))
	inPlace, err := readLDCache(path)
	require.NoError(t, err)
	assert.Equal(t, "/c/libcuda.so.1", inPlace.lookup("libcuda.so.1"), "an edit in place is read again")

	require.NoError(t, os.WriteFile(path+".new", []byte("not a cache"), 0o644))
	require.NoError(t, os.Rename(path+".new", path))
	_, err = readLDCache(path)
	require.ErrorIs(t, err, errBadCache)
	_, err2 := readLDCache(path)
	assert.Equal(t, err, err2, "a bad file's error is kept for it too")

	require.NoError(t, os.Remove(path))
	c, err := readLDCache(path)
	assert.NoError(t, err)
	assert.Nil(t, c, "a missing cache is no cache")
}
