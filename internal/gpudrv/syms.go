package gpudrv

import (
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/internal/dl"
)

// syms holds the raw layer: every address resolved once at load. A zero
// address is an optional symbol the library lacks.
type syms struct {
	init               uintptr // cuInit(unsigned int)
	driverGetVersion   uintptr // cuDriverGetVersion(int*)
	deviceGetCount     uintptr // cuDeviceGetCount(int*)
	deviceGet          uintptr // cuDeviceGet(CUdevice*, int)
	deviceGetName      uintptr // cuDeviceGetName(char*, int, CUdevice)
	deviceTotalMem     uintptr // cuDeviceTotalMem_v2(size_t*, CUdevice) or cuDeviceTotalMem(unsigned int*, CUdevice)
	deviceGetAttribute uintptr // cuDeviceGetAttribute(int*, CUdevice_attribute, CUdevice)
	primaryCtxRetain   uintptr // cuDevicePrimaryCtxRetain(CUcontext*, CUdevice)
	ctxSetCurrent      uintptr // cuCtxSetCurrent(CUcontext)
	ctxSynchronize     uintptr // cuCtxSynchronize(void)

	// Optional.
	deviceGetUuid     uintptr // cuDeviceGetUuid_v2 / cuDeviceGetUuid(CUuuid*, CUdevice)
	deviceGetPCIBusId uintptr // cuDeviceGetPCIBusId(char*, int, CUdevice)
	primaryCtxRelease uintptr // cuDevicePrimaryCtxRelease_v2 / cuDevicePrimaryCtxRelease(CUdevice)
	ctxGetCurrent     uintptr // cuCtxGetCurrent(CUcontext*)
	memGetInfo        uintptr // cuMemGetInfo_v2(size_t*, size_t*) / cuMemGetInfo(unsigned int*, unsigned int*)
	getErrorName      uintptr // cuGetErrorName(CUresult, const char**)
	getErrorString    uintptr // cuGetErrorString(CUresult, const char**)

	// Optional, modules and memory (module.go). Each method checks the
	// symbols it calls, so a library lacking them still serves the rest.
	moduleLoadDataEx  uintptr // cuModuleLoadDataEx(CUmodule*, const void*, unsigned, CUjit_option*, void**)
	moduleLoadData    uintptr // cuModuleLoadData(CUmodule*, const void*)
	moduleUnload      uintptr // cuModuleUnload(CUmodule)
	moduleGetFunction uintptr // cuModuleGetFunction(CUfunction*, CUmodule, const char*)
	moduleGetGlobal   uintptr // cuModuleGetGlobal_v2(CUdeviceptr*, size_t*, CUmodule, const char*) / cuModuleGetGlobal (32-bit)
	launchKernel      uintptr // cuLaunchKernel(CUfunction, 6 x unsigned, unsigned, CUstream, void**, void**)
	memAlloc          uintptr // cuMemAlloc_v2(CUdeviceptr*, size_t) / cuMemAlloc (32-bit)
	memFree           uintptr // cuMemFree_v2(CUdeviceptr) / cuMemFree
	memcpyHtoD        uintptr // cuMemcpyHtoD_v2(CUdeviceptr, const void*, size_t) / cuMemcpyHtoD
	memcpyDtoH        uintptr // cuMemcpyDtoH_v2(void*, CUdeviceptr, size_t) / cuMemcpyDtoH

	// The name found for each symbol that has versions, by suffix
	// ("DeviceTotalMem" -> "cuDeviceTotalMem_v2").
	found map[string]string
}

// symSpec is one entry of the symbol table: suffixes without the vendor
// prefix, the preferred (newest) version first.
type symSpec struct {
	addr     *uintptr
	names    []string
	required bool
}

func (s *syms) table() []symSpec {
	return []symSpec{
		{&s.init, []string{"Init"}, true},
		{&s.driverGetVersion, []string{"DriverGetVersion"}, true},
		{&s.deviceGetCount, []string{"DeviceGetCount"}, true},
		{&s.deviceGet, []string{"DeviceGet"}, true},
		{&s.deviceGetName, []string{"DeviceGetName"}, true},
		{&s.deviceTotalMem, []string{"DeviceTotalMem_v2", "DeviceTotalMem"}, true},
		{&s.deviceGetAttribute, []string{"DeviceGetAttribute"}, true},
		{&s.primaryCtxRetain, []string{"DevicePrimaryCtxRetain"}, true},
		{&s.ctxSetCurrent, []string{"CtxSetCurrent"}, true},
		{&s.ctxSynchronize, []string{"CtxSynchronize"}, true},

		{&s.deviceGetUuid, []string{"DeviceGetUuid_v2", "DeviceGetUuid"}, false},
		{&s.deviceGetPCIBusId, []string{"DeviceGetPCIBusId"}, false},
		{&s.primaryCtxRelease, []string{"DevicePrimaryCtxRelease_v2", "DevicePrimaryCtxRelease"}, false},
		{&s.ctxGetCurrent, []string{"CtxGetCurrent"}, false},
		{&s.memGetInfo, []string{"MemGetInfo_v2", "MemGetInfo"}, false},
		{&s.getErrorName, []string{"GetErrorName"}, false},
		{&s.getErrorString, []string{"GetErrorString"}, false},

		{&s.moduleLoadDataEx, []string{"ModuleLoadDataEx"}, false},
		{&s.moduleLoadData, []string{"ModuleLoadData"}, false},
		{&s.moduleUnload, []string{"ModuleUnload"}, false},
		{&s.moduleGetFunction, []string{"ModuleGetFunction"}, false},
		{&s.moduleGetGlobal, []string{"ModuleGetGlobal_v2", "ModuleGetGlobal"}, false},
		{&s.launchKernel, []string{"LaunchKernel"}, false},
		{&s.memAlloc, []string{"MemAlloc_v2", "MemAlloc"}, false},
		{&s.memFree, []string{"MemFree_v2", "MemFree"}, false},
		{&s.memcpyHtoD, []string{"MemcpyHtoD_v2", "MemcpyHtoD"}, false},
		{&s.memcpyDtoH, []string{"MemcpyDtoH_v2", "MemcpyDtoH"}, false},
	}
}

// MissingSymbolError says which required symbol a library lacks.
type MissingSymbolError struct {
	Library string   // the path
	Names   []string // full names tried: cuCtxSynchronize
	Err     error    // from dl, wraps dl.ErrMissingSymbol
}

func (e *MissingSymbolError) Error() string {
	return fmt.Sprintf("%s lacks the required symbol %s; it is too old or not this vendor's driver library",
		e.Library, strings.Join(e.Names, " / "))
}

func (e *MissingSymbolError) Unwrap() error { return e.Err }

// resolve fills s from lib. It fails on the first required symbol missing.
func (s *syms) resolve(v *Vendor, lib *dl.Library) error {
	s.found = map[string]string{}
	for _, e := range s.table() {
		full := make([]string, len(e.names))
		for i, n := range e.names {
			full[i] = v.sym(n)
		}
		addr, found, err := lib.SymAny(full...)
		if err != nil {
			if e.required {
				return &MissingSymbolError{Library: lib.Path, Names: full, Err: err}
			}
			continue
		}
		*e.addr = addr
		if len(full) > 1 {
			s.found[strings.TrimSuffix(e.names[0], "_v2")] = found
		}
	}
	return nil
}
