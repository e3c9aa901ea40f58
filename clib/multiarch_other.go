//go:build !amd64 && !arm64

package clib

// MultiarchLibDir is Debian's multiarch library folder for this architecture;
// "" (skipped by the search) where flagshim does not know it.
const MultiarchLibDir = ""
