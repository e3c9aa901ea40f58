//go:build !amd64 && !arm64

package driver

// MultiarchLibDir is Debian's multiarch library folder for this architecture;
// "" where flagshim does not know it.
const MultiarchLibDir = ""
