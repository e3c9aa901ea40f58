package dl

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// splitLibraryPath splits LD_LIBRARY_PATH into its elements as glibc's
// ld.so does: on ':' and ';', empty elements kept (ld.so reads an empty
// element as the working directory; the search refuses it). An empty value
// has no elements.
func splitLibraryPath(v string) []string {
	if v == "" {
		return nil
	}
	var out []string
	for {
		i := strings.IndexAny(v, ":;")
		if i < 0 {
			return append(out, v)
		}
		out = append(out, v[:i])
		v = v[i+1:]
	}
}

// libraryPathElement says whether an element of LD_LIBRARY_PATH may be
// searched: only an absolute folder without a dynamic string token. For one
// that may not, it returns the reason, which goes to the attempt log.
func libraryPathElement(elem string) error {
	switch {
	case elem == "":
		return fmt.Errorf("%w: skipped: relative/empty LD_LIBRARY_PATH element \"\" (ld.so would search the working directory); remove the empty element (a leading, trailing or doubled ':') from LD_LIBRARY_PATH", ErrRelativePath)
	case !strings.HasPrefix(elem, "/"):
		return fmt.Errorf("%w: skipped: relative/empty LD_LIBRARY_PATH element %q (relative to the working directory, which is never searched); use an absolute folder", ErrRelativePath, elem)
	case strings.Contains(elem, "$"):
		return fmt.Errorf("%w: skipped: LD_LIBRARY_PATH element %q uses a dynamic string token ($ORIGIN, $LIB, $PLATFORM), which flagshim does not expand; write the folder out", ErrOpen, elem)
	}
	return nil
}

// secureExecution approximates glibc's AT_SECURE, under which ld.so ignores
// LD_LIBRARY_PATH: a set-user-ID or set-group-ID process. (File
// capabilities, which also set AT_SECURE, are not detected.)
func secureExecution() bool {
	return unix.Getuid() != unix.Geteuid() || unix.Getgid() != unix.Getegid()
}
