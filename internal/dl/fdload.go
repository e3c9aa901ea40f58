package dl

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Check, then use, of the same file. The chain check reads the path; were
// dlopen given the path again, it would look it up anew, and a link flipped
// in between would load a file no check saw (a library from a
// world-writable folder ran its constructor so, in a race). So the file is
// opened once, the open file is proven to be the one the chain check saw
// (its device and inode) and checked again through the descriptor (owner,
// mode, regular file, the ELF image), and the loader is given
// /proc/self/fd/N: it maps the file the descriptor holds, whatever happens
// to the path meanwhile.
//
// The loader keeps "/proc/self/fd/N" as a name of the object (link_map's
// l_name, or one more name of an object already loaded from the same file:
// glibc's dlopen matches a loaded object by the device and inode of the
// file it opens, and by its names). So N must keep naming that file for
// the life of the process, or a later dlopen of another file through a
// reused N would be answered with this object: the descriptor of a file
// loaded this way stays open (close-on-exec), one per file, and the next
// Open of the same file (the same device and inode, checked again) asks
// the loader for the name it already knows, opening nothing new. loadedPath
// maps such a name back to the file checked.

// procPrefix is the folder of the process's descriptors the loader is
// given.
const procPrefix = "/proc/self/fd/"

// fileID is a file's identity: its device and inode.
type fileID struct{ dev, ino uint64 }

// loadedFiles are the files this package loaded through a descriptor.
var loadedFiles struct {
	mu   sync.Mutex
	name map[fileID]string // the loader's name of the file: "/proc/self/fd/N"
	real map[string]string // that name -> the file checked
}

// loadChecked opens real (the file the chain check resolved p to, with
// want what the check saw of it), proves the descriptor is that file and
// still safe, checks its ELF image and dlopens it through
// /proc/self/fd/N.
func (s *search) loadChecked(p, real string, want fileStat) (uintptr, error) {
	// O_NOFOLLOW: real has no link left; O_NONBLOCK: a FIFO put there
	// meanwhile does not block the open (fstat refuses it).
	fd, err := unix.Open(real, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: open %s: %v", ErrOpen, real, err)
	}
	keep := false
	defer func() {
		if !keep {
			unix.Close(fd)
		}
	}()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("%w: fstat %s: %v", ErrOpen, real, err)
	}
	if uint64(st.Dev) != want.Dev || uint64(st.Ino) != want.Ino {
		return 0, fmt.Errorf("%w: %s was replaced while it was being checked (the file opened is not the one checked); nothing was loaded", ErrUnsafePath, real)
	}
	if err := s.checkOpen(real, st); err != nil {
		return 0, err
	}
	if err := checkELF(fdReader(fd), st.Size); err != nil {
		return 0, fmt.Errorf("%w: %s: %v; reinstall the library (or point to the right file)", ErrBadELF, real, err)
	}
	id := fileID{uint64(st.Dev), uint64(st.Ino)}
	if usesOrigin(fdReader(fd)) {
		return s.loadResolved(p, real, id) // see origin.go
	}
	loadedFiles.mu.Lock()
	known, ok := loadedFiles.name[id]
	loadedFiles.mu.Unlock()
	if ok {
		// Loaded before through a descriptor still open: the loader knows
		// the file by that name, and the inode cannot have been reused.
		h, err := dlopen(known, s.mode)
		if err != nil {
			return 0, fmt.Errorf("%w: %s (loaded through %s): %s", ErrOpen, p, known, strings.ReplaceAll(err.Error(), known, real))
		}
		return h, nil
	}
	name := procPrefix + strconv.Itoa(fd)
	h, err := dlopen(name, s.mode)
	if err != nil {
		return 0, fmt.Errorf("%w: %s (loaded through %s): %s", ErrOpen, p, name, strings.ReplaceAll(err.Error(), name, real))
	}
	// The loader now knows the file by name (as a new object, or as one
	// more name of an object loaded from it before): the descriptor stays.
	keep = true
	loadedFiles.mu.Lock()
	if loadedFiles.name == nil {
		loadedFiles.name, loadedFiles.real = map[fileID]string{}, map[string]string{}
	}
	if _, ok := loadedFiles.name[id]; !ok {
		loadedFiles.name[id] = name
	}
	loadedFiles.real[name] = real
	loadedFiles.mu.Unlock()
	return h, nil
}

// checkOpen checks the open file as the chain check checked its path: a
// regular file that belongs to root or the user and that nobody else may
// write.
func (s *search) checkOpen(real string, st unix.Stat_t) error {
	fst := fileStat{Mode: uint32(st.Mode), Uid: st.Uid, Gid: st.Gid}
	switch {
	case fst.typ() != unix.S_IFREG:
		return fmt.Errorf("%w: %s is not a regular file (mode %#o); point to the library file itself", ErrBadELF, real, st.Mode)
	case !s.trust.ownerOK(st.Uid):
		return fmt.Errorf("%w: file %s belongs to uid %d, neither root nor this process's user (uid %d), who can replace it: chown root %s, or move the library to a folder only root can write",
			ErrUnsafePath, real, st.Uid, s.trust.euid, real)
	}
	if w := s.trust.writers(fst); w != "" {
		return fmt.Errorf("%w: file %s (mode %#o) is writable by %s: %s", ErrUnsafePath, real, fst.perm(), w, fixWrite(real, w))
	}
	return nil
}

// fdReader reads a descriptor at offsets (pread), for the ELF check.
type fdReader int

func (f fdReader) ReadAt(b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := unix.Pread(int(f), b[n:], off+int64(n))
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, fmt.Errorf("unexpected end of file at %d", off+int64(n))
		}
		n += m
	}
	return n, nil
}

// checkedName is the file an object this package loaded through
// /proc/self/fd/N was checked as; name itself otherwise.
func checkedName(name string) string {
	if !strings.HasPrefix(name, procPrefix) {
		return name
	}
	loadedFiles.mu.Lock()
	defer loadedFiles.mu.Unlock()
	if real, ok := loadedFiles.real[name]; ok {
		return real
	}
	return name
}
