package kunlunxin

import (
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/driver"
)

// Results is XPUError_t of xpu/defs.h (XRE 4.33.0: XPU_ERRNO_BASE 700,
// XPU_ERRNO(e) = 700 + e), each code under both signs: the XRE API
// reference says every call returns "a negative number whose absolute
// value is the error code" on failure, defs.h's xpu_strerror takes the
// absolute value, and the kernel driver returns -XPUERR_*; yet Paddle and
// others compare results with the positive constants. Which sign libxpurt
// really returns is not confirmed, so both are read the same. The names
// are data: xpu_strerror is static inline in defs.h (no library exports
// it), and XRE has no error-name function. There is no "not ready" (XRE 4
// cannot query an event) and no "invalid image" (no module loader).
var Results = func() map[int]driver.Result {
	m := map[int]driver.Result{0: {Name: "XPU_SUCCESS"}}
	for code, r := range positive {
		m[code], m[-code] = r, r
	}
	return m
}()

var positive = map[int]driver.Result{
	701: r("XPUERR_INVALID_DEVICE", device.ErrInvalidIndex),
	702: r("XPUERR_UNINIT", driver.ErrNotInitialized),
	703: r("XPUERR_NODEV", driver.ErrNoDevice, device.ErrNotAvailable), // "No available XPU device" (XRE API reference)
	704: r("XPUERR_VERSION", driver.ErrDriverMismatch, device.ErrNotAvailable),
	705: r("XPUERR_NOMEM", device.ErrOutOfMemory),
	706: r("XPUERR_NOCPUMEM", device.ErrOutOfMemory),
	707: r("XPUERR_INVALID_PARAM", device.ErrInvalidValue),
	708: r("XPUERR_NOXPUFUNC", device.ErrNotFound),
	709: r("XPUERR_LDSO"),
	710: r("XPUERR_LDSYM", device.ErrNotFound),
	711: r("XPUERR_SIMULATOR"),
	712: r("XPUERR_NOSUPPORT", device.ErrNotSupported),
	713: r("XPUERR_ABNORMAL", device.ErrLaunchFailed), // "Device abnormal due to previous error"
	714: r("XPUERR_KEXCEPTION", device.ErrLaunchFailed),
	715: r("XPUERR_TIMEOUT", device.ErrLaunchFailed), // "Kernel execution timed out"
	716: r("XPUERR_BUSY"),
	717: r("XPUERR_USEAFCLOSE", device.ErrInvalidValue), // "Use a stream after closed"
	718: r("XPUERR_UCECC"),
	719: r("XPUERR_OVERHEAT"),
	720: r("XPUERR_EVENTWAIT"),
	800: r("XPUERR_UNEXPECT"),
	801: r("XPUERR_DEVRESET"),
	802: r("XPUERR_HWEXCEPTION"),
	803: r("XPUERR_HBM_INIT"),
	804: r("XPUERR_DEVINIT"),
	805: r("XPUERR_PEERRESET"),
	806: r("XPUERR_MAXDEV"),
	807: r("XPUERR_NOIOC"),
	808: r("XPUERR_DMATIMEOUT"),
	809: r("XPUERR_DMAABORT"),
	810: r("XPUERR_MCUUNINIT"),
	811: r("XPUERR_OLDFW"),
	812: r("XPUERR_PCIE"),
	813: r("XPUERR_FAULT"),
	814: r("XPUERR_INTERRUPTED"),
	815: r("XPUERR_AESTIMEOUT"),
	816: r("XPUERR_HOSTMEM_ALREADY_REGISTERED"),
	817: r("XPUERR_TRACER"),
}

func r(name string, is ...error) driver.Result { return driver.Result{Name: name, Is: is} }
