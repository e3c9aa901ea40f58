package hip

// The device's name as ROCm's runtime gives it. hipDeviceGetName answers
// clr's boardName_, which is ROCr's HSA_AMD_AGENT_INFO_PRODUCT_NAME
// (ROCm/clr @0053584a rocclr/device/rocm/rocdevice.cpp,
// populateOCLDeviceConstants), and ROCr takes that from libdrm's
// amdgpu_get_marketing_name: the line of libdrm's table amdgpu.ids whose
// PCI device id and revision are the device's. The KFD topology's own
// "name" is the ASIC's name in lower case (kfd_topology.c,
// kfd_topology_add_device: __tolower(asic_name[i]); "aldebaran" for an
// MI250X), another kind of name, so the presence tier reads the same table
// libdrm reads to give the name the exact tier gives.
//
// The table's format (libdrm amdgpu/amdgpu_asic_id.c, parse_one_line and
// amdgpu_parse_asic_ids): one entry a line, "DEVICE_ID,\tREVISION_ID,\tNAME",
// both ids hexadecimal without 0x; an empty line or one starting '#' is
// skipped; the first other line is the table's version ("1.0.0"), not an
// entry; the name starts after the second comma, leading blanks trimmed,
// and ends at the next comma or the line's end.

import (
	"bufio"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/flagos-ai/flagshim/tier/presence"
)

// amdgpuIDs are where amdgpu.ids is looked for, in order: the libdrm that
// ROCm's amdgpu packages install (its datadir; not confirmed from a
// source), then libdrm's default datadir (meson's get_option('datadir')
// / 'libdrm', AMDGPU_ASIC_ID_TABLE).
var amdgpuIDs = []string{"/opt/amdgpu/share/libdrm/amdgpu.ids", "/usr/share/libdrm/amdgpu.ids"}

// maxIDsTable bounds what is read of amdgpu.ids (about 40 KB in 2025).
const maxIDsTable = 1 << 20

// asicID is a table key: the PCI device id and revision.
type asicID struct {
	device   uint16
	revision uint8
}

// marketingNames reads the first amdgpu.ids found under e's root that
// only root or this process's user owns and only its owner may write; nil,
// with a note, when there is none or it cannot be trusted. It is opened
// non-blocking, so a FIFO put in its place is refused by its mode rather
// than hanging the probe.
func marketingNames(e *presence.Env, notes *[]string) map[asicID]string {
	for _, p := range amdgpuIDs {
		full := e.Path(p)
		fd, err := unix.Open(full, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), full)
		defer f.Close()
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o022 != 0 ||
			(st.Uid != 0 && int(st.Uid) != unix.Geteuid()) {
			*notes = append(*notes, "amdgpu.ids at "+full+" is not a regular file that only its owner may write, owned by root or this user: device names from KFD's ASIC names")
			return nil
		}
		return parseIDs(io.LimitReader(f, maxIDsTable))
	}
	*notes = append(*notes, "no amdgpu.ids (libdrm's table of device names): device names from KFD's ASIC names")
	return nil
}

// parseIDs parses amdgpu.ids (the format above). A line that is not an
// entry is skipped, as libdrm skips it; the first entry for a key wins,
// as libdrm's search stops at the first match.
func parseIDs(r io.Reader) map[asicID]string {
	names := map[asicID]string{}
	sc := bufio.NewScanner(r)
	version := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if version {
			version = false
			continue
		}
		fields := strings.SplitN(line, ",", 4)
		if len(fields) < 3 {
			continue
		}
		// strtol's: leading blanks skipped ("1309,\t00,\tAMD ...").
		dev, err1 := strconv.ParseUint(strings.TrimSpace(fields[0]), 16, 16)
		rev, err2 := strconv.ParseUint(strings.TrimSpace(fields[1]), 16, 8)
		name := strings.TrimLeft(fields[2], " \t")
		if err1 != nil || err2 != nil || name == "" {
			continue
		}
		k := asicID{uint16(dev), uint8(rev)}
		if _, seen := names[k]; !seen {
			names[k] = name
		}
	}
	return names
}

// namer gives a device's marketing name by its PCI address, reading
// amdgpu.ids once, at its first use.
func namer(e *presence.Env, notes *[]string) func(addr string) (string, bool) {
	var names map[asicID]string
	loaded := false
	return func(addr string) (string, bool) {
		k, ok := pciASIC(e, addr)
		if !ok {
			return "", false
		}
		if !loaded {
			names, loaded = marketingNames(e, notes), true
		}
		name, ok := names[k]
		return name, ok
	}
}

// pciASIC reads the table key of the PCI device at addr (sysfs's form)
// from sysfs: its device id and revision.
func pciASIC(e *presence.Env, addr string) (asicID, bool) {
	dir := path.Join("/sys/bus/pci/devices", addr)
	dev, err1 := hexAttr(e, dir+"/device", 16)
	rev, err2 := hexAttr(e, dir+"/revision", 8)
	if err1 != nil || err2 != nil {
		return asicID{}, false
	}
	return asicID{uint16(dev), uint8(rev)}, true
}

// hexAttr reads a sysfs attribute written "0x1234".
func hexAttr(e *presence.Env, p string, bits int) (uint64, error) {
	s, err := e.ReadAttr(p)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, bits)
}
