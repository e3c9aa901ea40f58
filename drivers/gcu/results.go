package gcu

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Results is the topsError_t table of tops_runtime_api.h (the TopsRider 2.3
// header of EnflameTechnology/tops-codec-headers; a C enum, 4 bytes; the
// numbers are CUDA runtime's where they overlap): each code's name as
// topsGetErrorName writes it and the sentinels it matches. Where a number
// has two names (topsErrorOutOfMemory and the deprecated
// topsErrorMemoryAllocation) the first is used. topsErrorTbd, the enum's
// end marker, is left out. The TOPS runtime has no stub-library code
// (CUDA's 34). That TopsRider 3.x and topsPlatform 4.0 kept these numbers
// is not confirmed (no later header is public); the library's own
// topsGetErrorName names a code whatever its table says.
var Results = map[int]driver.Result{
	0:    r("topsSuccess"),
	1:    r("topsErrorInvalidValue", device.ErrInvalidValue),
	2:    r("topsErrorOutOfMemory", device.ErrOutOfMemory),
	3:    r("topsErrorNotInitialized", driver.ErrNotInitialized),
	4:    r("topsErrorDeinitialized", driver.ErrNotInitialized),
	5:    r("topsErrorProfilerDisabled"),
	6:    r("topsErrorProfilerNotInitialized"),
	7:    r("topsErrorProfilerAlreadyStarted"),
	8:    r("topsErrorProfilerAlreadyStopped"),
	9:    r("topsErrorInvalidConfiguration", device.ErrInvalidValue),
	12:   r("topsErrorInvalidPitchValue", device.ErrInvalidValue),
	13:   r("topsErrorInvalidSymbol", device.ErrInvalidValue),
	17:   r("topsErrorInvalidDevicePointer", device.ErrInvalidValue),
	21:   r("topsErrorInvalidMemcpyDirection", device.ErrInvalidValue),
	35:   r("topsErrorInsufficientDriver", driver.ErrDriverMismatch, device.ErrNotAvailable),
	52:   r("topsErrorMissingConfiguration"),
	53:   r("topsErrorPriorLaunchFailure", device.ErrLaunchFailed),
	98:   r("topsErrorInvalidDeviceFunction", device.ErrInvalidImage),
	100:  r("topsErrorNoDevice", driver.ErrNoDevice, device.ErrNotAvailable), // "Call to topsGetDeviceCount returned 0 devices"
	101:  r("topsErrorInvalidDevice", device.ErrInvalidIndex),
	200:  r("topsErrorInvalidImage", device.ErrInvalidImage),
	201:  r("topsErrorInvalidContext", driver.ErrInvalidContext),
	202:  r("topsErrorContextAlreadyCurrent"),
	205:  r("topsErrorMapFailed"),
	206:  r("topsErrorUnmapFailed"),
	207:  r("topsErrorArrayIsMapped"),
	208:  r("topsErrorAlreadyMapped"),
	209:  r("topsErrorNoBinaryForGcu", device.ErrInvalidImage),
	210:  r("topsErrorAlreadyAcquired"),
	211:  r("topsErrorNotMapped"),
	212:  r("topsErrorNotMappedAsArray"),
	213:  r("topsErrorNotMappedAsPointer"),
	214:  r("topsErrorECCNotCorrectable"),
	215:  r("topsErrorUnsupportedLimit"),
	216:  r("topsErrorContextAlreadyInUse"),
	217:  r("topsErrorPeerAccessUnsupported"),
	218:  r("topsErrorInvalidKernelFile", device.ErrInvalidImage),
	219:  r("topsErrorInvalidGraphicsContext"),
	300:  r("topsErrorInvalidSource", device.ErrInvalidImage),
	301:  r("topsErrorFileNotFound"),
	302:  r("topsErrorSharedObjectSymbolNotFound"),
	303:  r("topsErrorSharedObjectInitFailed"),
	304:  r("topsErrorOperatingSystem"),
	400:  r("topsErrorInvalidHandle", device.ErrInvalidValue),
	401:  r("topsErrorIllegalState"),
	500:  r("topsErrorNotFound", device.ErrNotFound),
	600:  r("topsErrorNotReady", device.ErrNotReady),
	700:  r("topsErrorIllegalAddress", device.ErrLaunchFailed),
	701:  r("topsErrorLaunchOutOfResources", device.ErrLaunchFailed),
	702:  r("topsErrorLaunchTimeOut", device.ErrLaunchFailed),
	704:  r("topsErrorPeerAccessAlreadyEnabled"),
	705:  r("topsErrorPeerAccessNotEnabled"),
	708:  r("topsErrorSetOnActiveProcess"),
	709:  r("topsErrorContextIsDestroyed"),
	710:  r("topsErrorAssert", device.ErrLaunchFailed),
	712:  r("topsErrorHostMemoryAlreadyRegistered"),
	713:  r("topsErrorHostMemoryNotRegistered"),
	719:  r("topsErrorLaunchFailure", device.ErrLaunchFailed),
	720:  r("topsErrorCooperativeLaunchTooLarge"),
	801:  r("topsErrorNotSupported", device.ErrNotSupported),
	900:  r("topsErrorStreamCaptureUnsupported"),
	901:  r("topsErrorStreamCaptureInvalidated"),
	902:  r("topsErrorStreamCaptureMerge"),
	903:  r("topsErrorStreamCaptureUnmatched"),
	904:  r("topsErrorStreamCaptureUnjoined"),
	905:  r("topsErrorStreamCaptureIsolation"),
	906:  r("topsErrorStreamCaptureImplicit"),
	907:  r("topsErrorCapturedEvent"),
	908:  r("topsErrorStreamCaptureWrongThread"),
	910:  r("topsErrorGraphExecUpdateFailure"),
	999:  r("topsErrorUnknown"),
	1052: r("topsErrorRuntimeMemory"),
	1053: r("topsErrorRuntimeOther"),
}

func r(name string, is ...error) driver.Result { return driver.Result{Name: name, Is: is} }
