package dl

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSplitLibraryPath(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{":", []string{"", ""}},
		{".", []string{"."}},
		{"/a", []string{"/a"}},
		{"/a:/b;/c", []string{"/a", "/b", "/c"}},
		{"/a::/b", []string{"/a", "", "/b"}},
		{"/a:", []string{"/a", ""}},
		{";/a", []string{"", "/a"}},
		{"/a b:/c", []string{"/a b", "/c"}},
	} {
		assert.Equal(t, c.want, splitLibraryPath(c.in), "%q", c.in)
	}
}

func TestLibraryPathElement(t *testing.T) {
	for _, elem := range []string{"", ".", "..", "lib", "./lib", "$ORIGIN/lib"} {
		err := libraryPathElement(elem)
		assert.ErrorIs(t, err, ErrRelativePath, "%q", elem)
		assert.Contains(t, err.Error(), "skipped: relative/empty LD_LIBRARY_PATH element")
	}
	err := libraryPathElement("/opt/$LIB")
	assert.ErrorIs(t, err, ErrOpen)
	assert.Contains(t, err.Error(), "dynamic string token")
	assert.NoError(t, libraryPathElement("/usr/local/lib"))
}

func FuzzSplitLibraryPath(f *testing.F) {
	for _, s := range []string{"", ":", ".", "/a:/b;/c", "/a::/b;", ";;", "$ORIGIN:/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		elems := splitLibraryPath(s)
		if s == "" {
			if elems != nil {
				t.Fatalf("%q: %q", s, elems)
			}
			return
		}
		if want := strings.Count(s, ":") + strings.Count(s, ";") + 1; len(elems) != want {
			t.Fatalf("%q: %d elements, want %d", s, len(elems), want)
		}
		n := 0
		for _, e := range elems {
			if strings.ContainsAny(e, ":;") {
				t.Fatalf("%q: element %q holds a separator", s, e)
			}
			n += len(e)
			err := libraryPathElement(e)
			if (err == nil) != (strings.HasPrefix(e, "/") && !strings.Contains(e, "$")) {
				t.Fatalf("element %q: %v", e, err)
			}
			if err != nil && !errors.Is(err, ErrRelativePath) && !errors.Is(err, ErrOpen) {
				t.Fatalf("element %q: %v wraps no sentinel", e, err)
			}
		}
		if n+len(elems)-1 != len(s) {
			t.Fatalf("%q: elements %q do not add up", s, elems)
		}
	})
}
