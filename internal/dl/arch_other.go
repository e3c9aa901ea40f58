//go:build !amd64 && !arm64

package dl

import "debug/elf"

// Machines without a table of their own (flagshim's drivers target x86-64
// and aarch64): the ELF machine is not checked (the class and byte order
// still are, and glibc itself refuses another machine's file without
// running it), ld.so.cache entries of any ELF libc6 flavour are taken (the
// ELF check then refuses one of the wrong class), and the default folders
// are glibc's generic ones.

const elfMachine = elf.EM_NONE

const cacheDefaultID = 0x0003 // FLAG_ELF_LIBC6

// cacheFlagsOK takes FLAG_ELF and FLAG_ELF_LIBC6 entries whatever their
// architecture bits (FLAG_TYPE_MASK is 0x00ff).
func cacheFlagsOK(flags int32) bool { return flags&0xff == 0x0001 || flags&0xff == 0x0003 }

var defaultDirs = []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"}
