package musa

// mtmlReturnNames are MtmlReturn of Moore Threads' mtml.h (MTML 2.2.0, as
// vendored in yeahdongcn/mthreads-ml-py mtml_2.2.0.h; the same numbers are in
// MooreThreads/mthreads-ml-py pymtml.py).
var mtmlReturnNames = map[int]string{
	0:   "MTML_SUCCESS",
	1:   "MTML_ERROR_DRIVER_NOT_LOADED",
	2:   "MTML_ERROR_DRIVER_FAILURE",
	3:   "MTML_ERROR_INVALID_ARGUMENT",
	4:   "MTML_ERROR_NOT_SUPPORTED",
	5:   "MTML_ERROR_NO_PERMISSION",
	6:   "MTML_ERROR_INSUFFICIENT_SIZE",
	7:   "MTML_ERROR_NOT_FOUND",
	8:   "MTML_ERROR_INSUFFICIENT_MEMORY",
	9:   "MTML_ERROR_DRIVER_TOO_OLD",
	10:  "MTML_ERROR_DRIVER_TOO_NEW",
	11:  "MTML_ERROR_TIMEOUT",
	12:  "MTML_ERROR_RESOURCE_IS_BUSY",
	999: "MTML_ERROR_UNKNOWN",
}

// The MtmlReturn codes this package tells apart.
const (
	mtmlSuccess         = 0
	mtmlDriverNotLoaded = 1
	mtmlNoPermission    = 5
)
