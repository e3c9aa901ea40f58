package presence

// Visible applies a CUDA_VISIBLE_DEVICES-style variable to devs (every
// device the source sees, in its own order) the way PyTorch's NVML-based
// device count reads it: set false (unset) keeps every device; set and
// empty keeps none. The same rules serve MUSA_VISIBLE_DEVICES. The result's
// Index fields are the ordinals the runtime will give the devices.
//
// Ordinals: entries are trimmed and read like strtoul ("1gpu" is 1); the
// list ends at the first entry with no digits or a negative one ("-1"
// selects nothing) and at the first ordinal past the last device; a
// repeated ordinal empties the list. UUIDs: a value starting "GPU-" lists
// UUID prefixes, up to the first entry not starting "GPU-"; an entry that
// matches no device or several ends the list; two entries naming one device
// empty it. A value starting "MIG-" is an ErrUndecidable error, as is a
// UUID list where the devices carry no UUID.
//
// Indexes follow the source's order, which is PCI bus order for NVML: the
// CUDA runtime's order when CUDA_DEVICE_ORDER=PCI_BUS_ID or when the GPUs
// are alike (its default, FASTEST_FIRST, may order unlike GPUs otherwise;
// the count is right either way).
func Visible(devs []Device, value string, set bool) ([]Device, error) {
	if !set {
		return renumber(devs, nil), nil
	}
	sel, err := selectVisible(torchCUDA, value, poolOf(devs))
	if err != nil {
		return nil, err
	}
	return renumber(devs, sel), nil
}

// VisibleROCR applies a ROCR_VISIBLE_DEVICES value (a set variable) to
// devs the way ROCR's filter does (amd_filter_device.cpp): empty keeps no
// device; entries are indexes (any C strtol number: "0x1", "010" is 8) or
// UUID prefixes such as "GPU-4a6b", case-insensitive, each matching exactly
// one device; the list ends at the first entry that is illegal, out of
// range, unmatched, ambiguous or repeated.
func VisibleROCR(devs []Device, value string) ([]Device, error) {
	sel, err := selectVisible(rocr, value, poolOf(devs))
	if err != nil {
		return nil, err
	}
	return renumber(devs, sel), nil
}

// VisibleCLR applies a HIP_VISIBLE_DEVICES value (set and not empty) to
// devs the way HIP's CLR does (rocdevice.cpp): entries are canonical decimal
// indexes or strings contained in one device's UUID; the list ends at the
// first invalid entry; a repeated index is skipped.
func VisibleCLR(devs []Device, value string) ([]Device, error) {
	sel, err := selectVisible(clr, value, poolOf(devs))
	if err != nil {
		return nil, err
	}
	return renumber(devs, sel), nil
}

// Renumber gives devs the ordinals 0..n-1 in their order, as a copy.
func Renumber(devs []Device) []Device { return renumber(devs, nil) }

// poolOf is what the parser needs of devs: their count and UUIDs (nil when
// none of them has one).
func poolOf(devs []Device) pool {
	p := pool{n: len(devs)}
	for _, d := range devs {
		if d.UUID != "" {
			p.uuids = make([]string, len(devs))
			for i, d := range devs {
				p.uuids[i] = d.UUID
			}
			break
		}
	}
	return p
}

// renumber copies the selected devices (all of them for sel nil) with their
// new ordinals.
func renumber(devs []Device, sel []int) []Device {
	if sel == nil {
		sel = make([]int, len(devs))
		for i := range sel {
			sel[i] = i
		}
	}
	out := make([]Device, 0, len(sel))
	for i, s := range sel {
		d := devs[s]
		d.Index = i
		out = append(out, d)
	}
	return out
}
