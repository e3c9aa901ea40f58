package mlu

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Results is the CNresult table of cn_api.h (CNDrv 2.15.5; a plain C enum,
// int-sized): each code's name and the sentinels it matches. The NCS and
// TCDP link codes (101400-101899) are left out: cnGetErrorName names them.
// CNDrv has no stub-library code (CUDA's 34): Neuware ships no link-time
// stub of libcndrv.
var Results = map[int]driver.Result{
	0:      r("CN_SUCCESS"),
	1:      r("CN_ERROR_NOT_READY", device.ErrNotReady),
	100002: r("CN_ERROR_NOT_INITIALIZED", driver.ErrNotInitialized),
	100003: r("CN_ERROR_DEINITIALIZED", driver.ErrNotInitialized), // "the MLU driver has been uninstalled or broken down"
	100004: r("CN_ERROR_NO_DEVICE", driver.ErrNoDevice, device.ErrNotAvailable),
	100005: r("CN_ERROR_INVALID_DEVICE", device.ErrInvalidIndex),
	100006: r("CN_ERROR_INVALID_VALUE", device.ErrInvalidValue),
	100007: r("CN_ERROR_OPERATING_SYSTEM"),
	100008: r("CN_ERROR_SYSTEM_NOT_READY"),
	100009: r("CN_ERROR_SYSTEM_DRIVER_MISMATCH", driver.ErrDriverMismatch, device.ErrNotAvailable), // "a mismatch between CNDrv and MLU driver"
	100010: r("CN_ERROR_SYSTEM_OUT_OF_MEMORY", device.ErrOutOfMemory),                              // host memory
	100011: r("CN_ERROR_INVALID_ADDRESS", device.ErrInvalidValue),                                  // a host address
	100012: r("CN_ERROR_FILE_NOT_FOUND"),
	100013: r("CN_ERROR_COMPAT_NOT_SUPPORT_ON_SYSTEM", device.ErrNotAvailable), // MLUs of different generations are visible
	100014: r("CN_ERROR_INVALID_HANDLE", device.ErrInvalidValue),
	100015: r("CN_ERROR_ILLEGAL_STATE"),
	100016: r("CN_ERROR_ECC_UNCORRECTABLE"),
	100050: r("CN_OPS_ERROR_NOT_SUPPORTED", device.ErrNotSupported),
	100051: r("CN_OPS_ERROR_NOT_PERMITTED"),
	100052: r("CN_OPS_ERROR_TIMEOUT"),
	100053: r("CN_OPS_ERROR_OUT_OF_RESOURCES", device.ErrOutOfMemory), // "Insufficient MLU memory. Insufficient host memory."
	100060: r("CN_QUEUE_ERROR_INVALID", device.ErrInvalidValue),
	100061: r("CN_QUEUE_ERROR_OUT_OF_RESOURCES", device.ErrOutOfMemory),
	100080: r("CN_NOTIFIER_ERROR_INVALID", device.ErrInvalidValue),
	100081: r("CN_NOTIFIER_ERROR_OUT_OF_RESOURCES"),
	100100: r("CN_MEMORY_ERROR_OUT_OF_MEMORY", device.ErrOutOfMemory),
	100101: r("CN_MEMORY_ERROR_OUT_OF_PROCESS_MAX_MEMORY", device.ErrOutOfMemory), // over MLU_PROCESS_MAX_MEMORY_USAG[E]
	100102: r("CN_MEMORY_ERROR_INVALID_ADDRESS", device.ErrInvalidValue),
	100120: r("CN_INVOKE_ERROR_OUT_OF_RESOURCES", device.ErrLaunchFailed),
	100121: r("CN_INVOKE_ERROR_EXECUTED_TIMEOUT", device.ErrLaunchFailed),
	100122: r("CN_INVOKE_ERROR_TIMEOUT", device.ErrLaunchFailed),
	100123: r("CN_INVOKE_ERROR_ILLEGAL_INSTRUCTION", device.ErrLaunchFailed),
	100124: r("CN_INVOKE_ERROR_ADDRESS_SPACE", device.ErrLaunchFailed),
	100125: r("CN_INVOKE_NO_TINYCORE", device.ErrLaunchFailed),
	100126: r("CN_INVOKE_ERROR_INVALID_PC", device.ErrLaunchFailed),
	100127: r("CN_INVOKE_ERROR_ILLEGAL_OPERAND", device.ErrLaunchFailed),
	100128: r("CN_INVOKE_ERROR_ASSERT", device.ErrLaunchFailed),
	100130: r("CN_INVOKE_ERROR_MEMORY_MISALIGNED_ADDRESS", device.ErrLaunchFailed),
	100131: r("CN_INVOKE_ERROR_MEMORY_ILLEGAL_ADDRESS", device.ErrLaunchFailed),
	100132: r("CN_INVOKE_ERROR_KERNEL_TRAP", device.ErrLaunchFailed),
	100133: r("CN_INVOKE_ERROR_KERNEL_USER_TRAP", device.ErrLaunchFailed),
	100134: r("CN_INVOKE_ERROR_STACK_OVERFLOW", device.ErrLaunchFailed),
	100135: r("CN_INVOKE_ERROR_OUT_OF_RANGE_ADDRESS", device.ErrLaunchFailed),
	100136: r("CN_INVOKE_ERROR_NAN", device.ErrLaunchFailed),
	100137: r("CN_INVOKE_ERROR_POSITIVE_INF", device.ErrLaunchFailed),
	100138: r("CN_INVOKE_ERROR_NEGATIVE_INF", device.ErrLaunchFailed),
	100200: r("CN_INVOKE_ERROR", device.ErrLaunchFailed), // "an exception occurs on the device when executing a kernel"
	100201: r("CN_CONTEXT_ERROR_INVALID", driver.ErrInvalidContext),
	100202: r("CN_CONTEXT_ERROR_OUT_OF_RESOURCES"),
	100300: r("CN_ERROR_INVALID_FATBIN", device.ErrInvalidImage), // "the fat binary compilation fails"
	100301: r("CN_ERROR_NOT_FOUND", device.ErrNotFound),
	100302: r("CN_ERROR_INVALID_KERNEL", device.ErrInvalidValue),
	100303: r("CN_FATBIN_ERROR_UNSUPPORTED_VERSION", device.ErrInvalidImage),
	100360: r("CN_ERROR_QUEUE_CAPTURE_UNSUPPORTED"),
	100361: r("CN_ERROR_QUEUE_CAPTURE_INVALIDATED"),
	100362: r("CN_ERROR_QUEUE_CAPTURE_WRONG_THREAD"),
	100363: r("CN_ERROR_QUEUE_CAPTURE_MERGED"),
	100364: r("CN_ERROR_QUEUE_CAPTURE_UNJOINED"),
	100365: r("CN_ERROR_QUEUE_CAPTURE_ISOLATION"),
	100366: r("CN_ERROR_QUEUE_CAPTURE_UNMATCHED"),
	100400: r("CN_ERROR_TASK_TOPO_ENTITY_UPDATE_FAILURE"),
	101312: r("CN_FATBIN_ERROR_NO_KERNEL", device.ErrInvalidImage),
	101313: r("CN_FATBIN_INVALID_IMAGE", device.ErrInvalidImage),
	101314: r("CN_FATBIN_LIBCNBIN_NOT_FOUND"),
	101315: r("CN_FATBIN_INVALID_ARCH", device.ErrInvalidImage), // compiled for another MLU
	200000: r("CN_ERROR_UNKNOWN"),
}

func r(name string, is ...error) driver.Result { return driver.Result{Name: name, Is: is} }
