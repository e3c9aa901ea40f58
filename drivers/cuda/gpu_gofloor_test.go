//go:build gpu && cgo

package cuda

import (
	"fmt"
	"math"
	"testing"

	"github.com/flagos-ai/flagshim/internal/gofloor"
)

// With cgo, the paired rows get their Go floor: the same driver calls as
// the backend's, each row's in one cgo call (internal/gofloor).
func init() {
	goFloor = goFloorRows
	goFloorPads = padRows
	goFloorLaunch = func(b *testing.B, e *pairedEnv, kernel uintptr) func(stream uintptr) error {
		p3 := gofloor.NewParams(uint64(e.p), uint64(e.p+8), 1000)
		return func(stream uintptr) error {
			if rc := gofloor.SetThenLaunch(e.set, e.ctx, e.launch, kernel, stream, p3); rc != 0 {
				return fmt.Errorf("Go floor: cuCtxSetCurrent, cuLaunchKernel returned %d", rc)
			}
			return nil
		}
	}
}

func goFloorRows(b *testing.B, e *pairedEnv) map[string]func() error {
	check := func(what string, rc int) error {
		if rc != 0 {
			return fmt.Errorf("Go floor: %s returned %d", what, rc)
		}
		return nil
	}
	p3 := gofloor.NewParams(uint64(e.p), uint64(e.p+8), 1000)
	p8 := gofloor.NewParams(uint64(e.p), uint64(e.p+8), 1000, 7, 1<<40, 3, uint64(math.Float32bits(0.5)), math.Float64bits(2.5))
	nop3, nop8, st, ev := handle(b, e.nop3), handle(b, e.nop8), handle(b, e.st), handle(b, e.ev)
	dev := uint64(e.dev)
	sync := func() error {
		return check("cuCtxSetCurrent, cuCtxSynchronize", gofloor.SetThen0(e.set, e.ctx, e.sync))
	}
	if e.syncV2 != 0 { // as the backend and the C floor, where the driver has it
		sync = func() error { return check("cuCtxSynchronize_v2", gofloor.Call1(e.syncV2, e.ctx)) }
	}
	streamSync := func() error {
		return check("cuCtxSetCurrent, cuStreamSynchronize", gofloor.SetThen1(e.set, e.ctx, e.streamSync, st))
	}
	record := func() error {
		return check("cuCtxSetCurrent, cuEventRecord", gofloor.SetThen2(e.set, e.ctx, e.eventRecord, ev, st))
	}
	rows := map[string]func() error{
		"SetCurrent":  func() error { return check("cuCtxSetCurrent", gofloor.Call1(e.set, e.ctx)) },
		"Synchronize": sync,
		"Launch3Args": func() error {
			return check("cuCtxSetCurrent, cuLaunchKernel", gofloor.SetThenLaunch(e.set, e.ctx, e.launch, nop3, 0, p3))
		},
		"Launch8Args": func() error {
			return check("cuCtxSetCurrent, cuLaunchKernel", gofloor.SetThenLaunch(e.set, e.ctx, e.launch, nop8, 0, p8))
		},
		"CopyHtoD4K": func() error {
			return check("cuCtxSetCurrent, cuMemcpyHtoD_v2", gofloor.SetThenHtoD(e.set, e.ctx, e.htod, dev, e.host))
		},
		"CopyDtoH4K": func() error {
			return check("cuCtxSetCurrent, cuMemcpyDtoH_v2", gofloor.SetThenDtoH(e.set, e.ctx, e.dtoh, e.host, dev))
		},
		"StreamSynchronize": streamSync,
		"EventRecord":       record,
		// The Raw rows (clib's transition alone) against the same floors.
		"RawSynchronize":       sync,
		"PreparedSynchronize":  sync,
		"RawStreamSynchronize": streamSync,
		"RawEventRecord":       record,
		"RawLaunch3Args": func() error {
			return check("cuCtxSetCurrent, cuLaunchKernel", gofloor.SetThenLaunch(e.set, e.ctx, e.launch, nop3, 0, p3))
		},
		"RawParamsLaunch3Args": func() error {
			return check("cuCtxSetCurrent, cuLaunchKernel", gofloor.SetThenLaunch(e.set, e.ctx, e.launch, nop3, 0, p3))
		},
		"RawLaunch8Args": func() error {
			return check("cuCtxSetCurrent, cuLaunchKernel", gofloor.SetThenLaunch(e.set, e.ctx, e.launch, nop8, 0, p8))
		},
	}
	// The Pad rows' floor: StreamSynchronize's, as it is (padRows).
	for _, pad := range padBytes {
		rows[fmt.Sprintf("PadStreamSynchronize/%d", pad)] = streamSync
	}
	return rows
}

// padRows set StreamSynchronize's Go floor with its C stack moved down by
// each of padBytes (and by the padding function's own frame) against the
// same floor as it is: how much where a caller's frame puts the driver's
// own frames changes the driver's time, whatever the caller does (a
// control for the transition's rows).
func padRows(e *pairedEnv, b *testing.B) []pairedRow {
	st := handle(b, e.st)
	var rows []pairedRow
	for _, pad := range padBytes {
		rows = append(rows, pairedRow{fmt.Sprintf("PadStreamSynchronize/%d", pad), opSetStreamSync, 2000, func() error {
			if rc := gofloor.PadThen1(uintptr(pad), e.set, e.ctx, e.streamSync, st); rc != 0 {
				return fmt.Errorf("Go floor: cuCtxSetCurrent, cuStreamSynchronize returned %d", rc)
			}
			return nil
		}, nil})
	}
	return rows
}

var padBytes = []int{0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 512, 1024, 4096}
