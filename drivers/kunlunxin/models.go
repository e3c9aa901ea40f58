package kunlunxin

import "strconv"

// The boards of XRE's DeviceModel (xpu/defs.h, XRE 4.33.0), with the
// names of its static inline xpu_device_model_str, which no library
// exports: carried here as data. XPUML's xpumlDeviceModel_t has the same
// numbers ("be compatible with DeviceModel in xpu/defs.h", xpuml.h).
var models = map[uint64]string{
	0: "K200", 1: "K100",
	2: "R200", 3: "R300", 4: "R200-8F", 5: "R200-8FS", 6: "R100", 7: "R200_DEBUG_BOARD",
	8: "R420", 9: "RG800", 10: "RG800-PRO", 11: "RM80",
	200: "R200-PF", 201: "R200-VF-16G", 202: "R200-VF-8G", 203: "R200-VF-5G",
	204: "R300-PF", 205: "R300-VF-32G", 206: "R300-VF-16G", 207: "R300-VF-10G",
	208: "R200-8F-PF", 209: "R200-8F-VF-32G", 210: "R200-8F-VF-16G", 211: "R200-8F-VF-10G",
	212: "R200-8FS-PF", 213: "R200-8FS-VF-32G", 214: "R200-8FS-VF-16G", 215: "R200-8FS-VF-10G",
	216: "RG800-PF", 217: "RG800-VF-32G", 218: "RG800-VF-16G", 219: "RG800-VF-10G",
	220: "RG800-PRO-PF", 221: "RG800-PRO-VF-32G", 222: "RG800-PRO-VF-16G", 223: "RG800-PRO-VF-10G",
	300: "KL3",
}

// ModelName is the name of a DeviceModel number: xpu_device_model_str's
// ("R300"), or "Kunlunxin model <n>" for a number it does not know (it
// says "Unknown model").
func ModelName(model uint64) string {
	if n, ok := models[model]; ok {
		return n
	}
	return "Kunlunxin model " + strconv.FormatUint(model, 10)
}

// generation is the Kunlun generation of a DeviceModel number, by defs.h's
// ranges (KL1_BEGIN 0..KL1_END 1, KL2_BEGIN 2..KL2_END 299, KL3_BEGIN
// 300..KL3_END 599; Paddle's get_xpu_version reads them the same way); ok
// is false past them.
func generation(model uint64) (int, bool) {
	switch {
	case model <= 1:
		return 1, true
	case model <= 299:
		return 2, true
	case model <= 599:
		return 3, true
	}
	return 0, false
}
