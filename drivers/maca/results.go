package maca

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Results is the mcError_t table: MACA numbers its errors as the CUDA
// runtime numbers cudaError_t, with MetaX's own codes from 1003 and 10000.
// Names and values are from a Cython transcription of the MACA runtime's
// error enum with explicit values (cdef enum _mcError_t, 120+ entries;
// stored public file, repository not named by the index), corroborated by
// mcStreamBeginCapture on the null stream returning 900 (Paddle/FastDeploy
// MetaX notes) and by the names FlagCX's maca_adaptor.cc and FlagTree's
// driver.c use (mcSuccess, mcErrorNotReady, mcErrorInvalidValue,
// mcErrorNotSupported). Only the codes with a value in those sources are
// here; others get the core's generated name unless mcGetErrorName names
// them. MACA has no stub library and no stub code (CUDA's 34).
var Results = map[int]driver.Result{
	0:  r("mcSuccess"),
	1:  r("mcErrorInvalidValue", device.ErrInvalidValue),
	2:  r("mcErrorMemoryAllocation", device.ErrOutOfMemory),
	3:  r("mcErrorInitializationError", driver.ErrNotInitialized),
	4:  r("mcErrorDeinitialized", driver.ErrNotInitialized),
	98: r("mcErrorInvalidDeviceFunction", device.ErrNotFound), // cudaErrorInvalidDeviceFunction: "the requested device function does not exist"
	// With no device the CUDA runtime answers 100; InfiniTensor/mxdrv
	// expects mcInit to answer mcErrorInvalidDevice (101) then (an init
	// failure either way).
	100: r("mcErrorNoDevice", driver.ErrNoDevice, device.ErrNotAvailable),
	101: r("mcErrorInvalidDevice", device.ErrInvalidIndex),
	200: r("mcErrorInvalidKernelImage", device.ErrInvalidImage),
	// cudaErrorDeviceUninitialized (201), the runtime's "no context is
	// bound to the calling thread" (CUDA's CUDA_ERROR_INVALID_CONTEXT).
	201:   r("mcErrorDeviceUninitialized", driver.ErrInvalidContext),
	209:   r("mcErrorNoKernelImageForDevice", device.ErrInvalidImage),
	218:   r("mcErrorInvalidKernelFile", device.ErrInvalidImage), // CUDA's "invalid PTX"
	302:   r("mcErrorSharedObjectSymbolNotFound", device.ErrNotFound),
	400:   r("mcErrorInvalidResourceHandle", device.ErrInvalidValue),
	500:   r("mcErrorSymbolNotFound", device.ErrNotFound),
	600:   r("mcErrorNotReady", device.ErrNotReady),
	700:   r("mcErrorIllegalAddress", device.ErrLaunchFailed),
	701:   r("mcErrorLaunchOutOfResources", device.ErrLaunchFailed),
	719:   r("mcErrorLaunchFailure", device.ErrLaunchFailed),
	800:   r("mcErrorNotPermitted"),
	801:   r("mcErrorNotSupported", device.ErrNotSupported),
	900:   r("mcErrorStreamCaptureUnsupported"),
	999:   r("mcErrorUnknown"),
	1003:  r("mcErrorDuplicateLoadModule"),
	1004:  r("mcErrorModuleNotFound", device.ErrNotFound),
	2000:  r("mcErrorInvalidKernel", device.ErrInvalidImage),
	2001:  r("mcErrorDeviceNotFound", device.ErrInvalidIndex),
	10000: r("mcErrorApiFailureBase"),
	10003: r("mcErrorDriverMismatch", driver.ErrDriverMismatch, device.ErrNotAvailable),
	10025: r("mcErrorInvalidContext", driver.ErrInvalidContext),
	10027: r("mcErrorNotFound", device.ErrNotFound),
	10032: r("mcErrorKernelExecTimeout", device.ErrLaunchFailed),
}

func r(name string, is ...error) driver.Result { return driver.Result{Name: name, Is: is} }
