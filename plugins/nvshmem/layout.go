package nvshmem

import (
	"strconv"
	"unsafe"
)

// The init attribute and unique ID of NVSHMEM 3.x, as Go structs with the C
// layout (linux, 64-bit). Where each number comes from:
//
//   - include/bootstrap_device_host/nvshmem_uniqueid.h: nvshmemx_uniqueid_v1
//     is {int version; char internal[UNIQUEID_PADDING=124]} (128 bytes,
//     static_assert in the header); nvshmemx_uniqueid_args_v1 is {int version;
//     nvshmemx_uniqueid_v1 *id; int myrank; int nranks} (24 bytes, asserted).
//   - include/device_host/nvshmem_types.h: nvshmemx_init_args_v1 is {int
//     version; nvshmemx_uniqueid_args_t uid_args; char
//     content[INIT_ARGS_PADDING=96]} (128 bytes, asserted);
//     nvshmemx_init_attr_v1 is {int version; void *mpi_comm;
//     nvshmemx_init_args_t args} (144 bytes, asserted). Versions are
//     (1 << 16) + sizeof(struct) (nvshmemx_init_init_attr_ver_only and the
//     *_INITIALIZER macros); UNIQUEID_ARGS_INVALID is -1 for myrank and
//     nranks.
//   - include/host/nvshmemx_api.h: NVSHMEMX_INIT_WITH_UNIQUEID = 1 << 3.
//   - include/device_host_transport/nvshmem_constants.h:
//     nvshmemx_init_status_t (NOT_INITIALIZED 0, IS_BOOTSTRAPPED 1,
//     IS_INITIALIZED 2, LIMITED_MPG 3, FULL_MPG 4, INVALID INT_MAX).
//
// These were read from the headers of the nvidia-nvshmem wheel (NVSHMEM
// 3.4.5, CUDA 13) on an H200 machine, and checked there by
// testdata/native_check.cu, which printed sizeof 128/24/128/144, offsets
// mpi_comm 8, args 16, uid_args 24, id 32, myrank 40, nranks 44, and the
// initializer bytes 0x00010090, 0x00010080, 0x00010018, -1, -1 (attr) and
// 0x00010080 (unique ID). The set_attr/hostlib functions check the version
// words, so a library with another layout answers with an error instead of
// reading past the struct.

// Init flags (nvshmemx_api.h).
const initWithUniqueID = 1 << 3

// UniqueIDSize is sizeof(nvshmemx_uniqueid_t).
const UniqueIDSize = 128

// UniqueID is an nvshmemx_uniqueid_t: opaque bytes that rank 0 gets from
// [Lib.GetUniqueID] and every rank passes to [Lib.InitUniqueID].
type UniqueID [UniqueIDSize]byte

func version(size uintptr) int32 { return int32(1<<16 + size) }

type uniqueIDArgs struct {
	version int32
	_       [4]byte
	id      uintptr // *nvshmemx_uniqueid_t; points at Go memory kept alive across the call
	myrank  int32
	nranks  int32
}

type initArgs struct {
	version int32
	_       [4]byte
	uidArgs uniqueIDArgs
	content [96]byte
}

type initAttr struct {
	version int32
	_       [4]byte
	mpiComm uintptr
	args    initArgs
}

// Compile-time checks of the sizes the headers assert.
var (
	_ [unsafe.Sizeof(uniqueIDArgs{}) - 24]byte
	_ [24 - unsafe.Sizeof(uniqueIDArgs{})]byte
	_ [unsafe.Sizeof(initArgs{}) - 128]byte
	_ [128 - unsafe.Sizeof(initArgs{})]byte
	_ [unsafe.Sizeof(initAttr{}) - 144]byte
	_ [144 - unsafe.Sizeof(initAttr{})]byte
)

// newInitAttr is NVSHMEMX_INIT_ATTR_INITIALIZER.
func newInitAttr() *initAttr {
	return &initAttr{
		version: version(unsafe.Sizeof(initAttr{})),
		args: initArgs{
			version: version(unsafe.Sizeof(initArgs{})),
			uidArgs: uniqueIDArgs{version: version(unsafe.Sizeof(uniqueIDArgs{})), myrank: -1, nranks: -1},
		},
	}
}

// newUniqueID is NVSHMEMX_UNIQUEID_INITIALIZER: the version word, then zeros.
func newUniqueID() *UniqueID {
	var u UniqueID
	v := uint32(version(UniqueIDSize))
	u[0], u[1], u[2], u[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	return &u
}

// Status is nvshmemx_init_status().
type Status int

// The values of nvshmemx_init_status_t.
const (
	StatusNotInitialized Status = 0
	StatusBootstrapped   Status = 1 // bootstrapped, device state not set up (no context was current)
	StatusInitialized    Status = 2
	StatusLimitedMPG     Status = 3
	StatusFullMPG        Status = 4
	StatusInvalid        Status = 1<<31 - 1
)

func (s Status) String() string {
	switch s {
	case StatusNotInitialized:
		return "NVSHMEM_STATUS_NOT_INITIALIZED"
	case StatusBootstrapped:
		return "NVSHMEM_STATUS_IS_BOOTSTRAPPED"
	case StatusInitialized:
		return "NVSHMEM_STATUS_IS_INITIALIZED"
	case StatusLimitedMPG:
		return "NVSHMEM_STATUS_LIMITED_MPG"
	case StatusFullMPG:
		return "NVSHMEM_STATUS_FULL_MPG"
	case StatusInvalid:
		return "NVSHMEM_STATUS_INVALID"
	}
	return "NVSHMEM_STATUS(" + strconv.Itoa(int(s)) + ")"
}

// Initialized reports whether the device state is set up, so that
// nvshmemx_cumodule_init can work.
func (s Status) Initialized() bool {
	return s == StatusInitialized || s == StatusLimitedMPG || s == StatusFullMPG
}
