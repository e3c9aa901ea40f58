package presence

import "fmt"

// Error is a failed call of a management library: its return code, the
// code's name and the library's own message.
type Error struct {
	Library string // "NVML", "MTML"
	Func    string // the C function: "nvmlInit_v2"
	Code    int    // nvmlReturn_t / MtmlReturn
	Name    string // "NVML_ERROR_DRIVER_NOT_LOADED"; "" for a code the table lacks
	Message string // the library's ErrorString; "" when it has none
}

// Error says which call failed, with the code, its name and the message.
func (e *Error) Error() string {
	name := e.Name
	if name == "" {
		name = "unknown code"
	}
	s := fmt.Sprintf("%s %s: %s (%d)", e.Library, e.Func, name, e.Code)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// nvmlReturnNames are nvmlReturn_t of nvml.h (NVIDIA/go-nvml pkg/nvml/nvml.h).
var nvmlReturnNames = map[int]string{
	0:   "NVML_SUCCESS",
	1:   "NVML_ERROR_UNINITIALIZED",
	2:   "NVML_ERROR_INVALID_ARGUMENT",
	3:   "NVML_ERROR_NOT_SUPPORTED",
	4:   "NVML_ERROR_NO_PERMISSION",
	5:   "NVML_ERROR_ALREADY_INITIALIZED",
	6:   "NVML_ERROR_NOT_FOUND",
	7:   "NVML_ERROR_INSUFFICIENT_SIZE",
	8:   "NVML_ERROR_INSUFFICIENT_POWER",
	9:   "NVML_ERROR_DRIVER_NOT_LOADED",
	10:  "NVML_ERROR_TIMEOUT",
	11:  "NVML_ERROR_IRQ_ISSUE",
	12:  "NVML_ERROR_LIBRARY_NOT_FOUND",
	13:  "NVML_ERROR_FUNCTION_NOT_FOUND",
	14:  "NVML_ERROR_CORRUPTED_INFOROM",
	15:  "NVML_ERROR_GPU_IS_LOST",
	16:  "NVML_ERROR_RESET_REQUIRED",
	17:  "NVML_ERROR_OPERATING_SYSTEM",
	18:  "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
	19:  "NVML_ERROR_IN_USE",
	20:  "NVML_ERROR_MEMORY",
	21:  "NVML_ERROR_NO_DATA",
	22:  "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED",
	23:  "NVML_ERROR_INSUFFICIENT_RESOURCES",
	24:  "NVML_ERROR_FREQ_NOT_SUPPORTED",
	25:  "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
	26:  "NVML_ERROR_DEPRECATED",
	27:  "NVML_ERROR_NOT_READY",
	28:  "NVML_ERROR_GPU_NOT_FOUND",
	29:  "NVML_ERROR_INVALID_STATE",
	30:  "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED",
	999: "NVML_ERROR_UNKNOWN",
}

// The nvmlReturn_t codes this package tells apart.
const (
	nvmlSuccess         = 0
	nvmlNoPermission    = 4
	nvmlDriverNotLoaded = 9
	nvmlRMMismatch      = 18
)

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
