package mlu

// cndevRetNames are cndevRet_t of cndev.h (Cambricon/mlu-exporter
// pkg/cndev/include/cndev.h, the CNDEV_VERSION_6 header; codes 0-13 are in
// its earlier revisions too).
var cndevRetNames = map[int]string{
	0:  "CNDEV_SUCCESS",
	1:  "CNDEV_ERROR_NO_DRIVER",
	2:  "CNDEV_ERROR_LOW_DRIVER_VERSION",
	3:  "CNDEV_ERROR_UNSUPPORTED_API_VERSION",
	4:  "CNDEV_ERROR_UNINITIALIZED",
	5:  "CNDEV_ERROR_INVALID_ARGUMENT",
	6:  "CNDEV_ERROR_INVALID_DEVICE_ID",
	7:  "CNDEV_ERROR_UNKNOWN",
	8:  "CNDEV_ERROR_MALLOC",
	9:  "CNDEV_ERROR_INSUFFICIENT_SPACE",
	10: "CNDEV_ERROR_NOT_SUPPORTED",
	11: "CNDEV_ERROR_INVALID_LINK",
	12: "CNDEV_ERROR_NO_DEVICES",
	13: "CNDEV_ERROR_NO_PERMISSION",
	14: "CNDEV_ERROR_NOT_FOUND",
	15: "CNDEV_ERROR_IN_USE",
	16: "CNDEV_ERROR_DUPLICATE",
	17: "CNDEV_ERROR_TIMEOUT",
	18: "CNDEV_ERROR_IN_PROBLEM",
}

// The cndevRet_t codes this package tells apart.
const (
	cndevNoDriver         = 1
	cndevLowDriverVersion = 2
	cndevNoDevices        = 12
	cndevNoPermission     = 13
)
