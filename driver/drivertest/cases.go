package drivertest

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flagos-ai/flagshim/driver"
	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// fakeCase is one scenario of the kit.
type fakeCase struct {
	name string
	// needs are the features, as driver.Vendor.Unbound names them
	// ("modules", "launches", "streams", ...), that the case exercises: it
	// does not apply to a vendor for which the core declares one of them
	// unsupported (and the case that proves such a call says so runs
	// instead).
	needs []string
	// skip, when set, says why the case cannot apply to a vendor for
	// another reason ("" when it does): a stub library for a vendor that
	// has none.
	skip func(s *Suite) string
	// table, when set, is a case that needs no library: it checks the
	// Vendor description in the test's own process.
	table func(t *testing.T, s *Suite)
	// setup builds what the case needs and returns the child's environment.
	setup func(t *testing.T, s *Suite) []string
	// check runs in the child, against a backend of the fake.
	check func(t *testing.T, s *Suite, b *driver.Backend)
}

// cases is every scenario of the kit: one row each, in the order they
// start. A new case is a row here and its check beside the others of its
// topic (cases_<topic>.go).
var cases = []fakeCase{
	// The Vendor description itself (cases_table.go).
	{name: "results_one_sentinel_each", table: resultsOneSentinel},
	{name: "new_does_no_io", table: newDoesNoIO},

	// The presence tier (cases_presence.go).
	{name: "presence_real_root", table: presenceRealRoot},
	{name: "presence_override_refused", skip: noLibraryOverride, table: presenceOverrideRefused},

	// Finding, checking and loading the library; init (cases_probe.go).
	{name: "no_library", setup: func(*testing.T, *Suite) []string { return []string{absentEnv + "=1"} }, check: noLibrary},
	{name: "ld_library_path", setup: ldLibraryPath, check: foundThroughLoader},
	{name: "absolute_override", setup: absoluteOverride, check: overrideWins},
	{name: "relative_override", setup: relativeOverride, check: relativeRefused},
	{name: "world_writable", setup: worldWritable, check: func(t *testing.T, s *Suite, b *driver.Backend) {
		notAvailable(t, b, driver.ErrUnsafeLibrary)
		dryMatches(t, s, b)
	}},
	{name: "world_writable_searched", setup: worldWritableSearched, check: unsafeSkipped},
	{name: "stub", skip: noStubCode, setup: withOverride(nil, "FAKE_STUB=1"), check: stub},
	initCase(35, driver.ErrDriverMismatch),
	initCase(100, driver.ErrNoDevice),
	initCase(803, driver.ErrDriverMismatch),
	initCase(804, driver.ErrDriverMismatch),
	initCase(999),
	{name: "zero_devices", setup: zeroDevicesSetup, check: zeroDevices},
	{name: "absurd_device_count", setup: withOverride(nil, "FAKE_RAW_COUNT=2147483647"), check: absurdCount},
	{name: "init_hangs", setup: withOverride(nil, "FAKE_INIT_SLEEP_MS=5000"), check: initHangs},
	{name: "missing_optional_symbol", needs: []string{"PCI bus ids"}, skip: noOwnPCIFunction,
		setup: withOverride([]string{"-DFAKE_NO_PCI_BUS_ID"}), check: missingOptional},
	{name: "versioned_fallback", skip: noVersionedTotalMem,
		setup: withOverride([]string{"-DFAKE_NO_TOTALMEM_V2"}, "FAKE_TOTAL_MEM=3221225472"), check: versionedFallback},
	{name: "missing_required_symbol", setup: withOverride([]string{"-DFAKE_NO_CTX_SYNCHRONIZE"}), check: missingRequired},

	// Device nodes a searched library needs (cases_nodes.go).
	{name: "device_node_missing", setup: nodes(false, false), check: nodeMissing},
	{name: "device_node_present", setup: nodes(true, false), check: nodeLoads},
	{name: "device_node_missing_override", setup: nodes(false, true), check: nodeLoads},

	// A loaded backend's calls (cases_calls.go).
	{name: "lazy_and_concurrent_first_use", setup: logged(), check: lazyConcurrent},
	{name: "backend", setup: withOverride(nil, "FAKE_DEVICE_NAMES=Fake H200 A,Fake H200 B", "FAKE_CC=9.0",
		"FAKE_SM_COUNT=132", "FAKE_TOTAL_MEM=150754820096"), check: backend},
	{name: "threads", setup: withOverride(nil, "FAKE_DEVICE_COUNT=4"), check: threads},
	{name: "hot_paths_allocate_nothing", setup: withOverride(nil), check: hotPaths},
	{name: "call_error", setup: withOverride(nil, "FAKE_SYNC_RESULT=700"), check: callError},
	{name: "library_error_name", setup: withOverride(nil, "FAKE_SYNC_RESULT=1054"), check: libraryErrorName},
	{name: "with_context", setup: withOverride(nil), check: withContext},
	{name: "unavailable_note", setup: unavailableSetup, check: unavailableNote},

	// Memory and modules (cases_compute.go), launches (cases_launch.go).
	{name: "memory", needs: []string{"device memory"}, setup: withOverride(nil, "FAKE_TOTAL_MEM=1073741824"), check: memory},
	{name: "modules", needs: []string{"modules", "device memory"}, setup: withOverride(nil), check: moduleRoundTrip},
	{name: "modules_without_ex", needs: []string{"modules", "device memory"}, skip: oneLoader,
		setup: withOverride([]string{"-DFAKE_NO_LOAD_DATA_EX"}, "DRIVERTEST_NO_EX=1"), check: moduleRoundTrip},
	{name: "modules_not_supported", setup: withOverride([]string{"-DFAKE_NO_MODULES"}), check: noModules},
	{name: "launch_checked", needs: []string{"modules", "launches", "device memory"}, skip: lacksParamInfo,
		setup: withOverride(nil), check: launchChecked},
	{name: "launch_unchecked_reads_zeros", needs: []string{"modules", "launches", "device memory"},
		setup: launchUncheckedSetup, check: launchUncheckedReadsZeros},

	// Streams, events and pinned memory (cases_streams.go), graphs
	// (cases_graphs.go).
	{name: "streams", needs: []string{"streams", "device memory"}, setup: withOverride(nil), check: streams},
	{name: "stream_wait_orders_work", needs: []string{"streams", "events", "device memory"}, setup: withOverride(nil), check: streamWait},
	{name: "streams_not_supported", setup: withOverride([]string{"-DFAKE_NO_STREAMS"}), check: noStreams},
	{name: "graphs", needs: []string{"graphs", "streams", "events", "pinned host memory", "asynchronous copies", "modules", "launches", "device memory"},
		setup: withOverride(nil), check: graphs},
	{name: "graphs_not_supported", needs: []string{"streams", "modules", "device memory"},
		setup: withOverride([]string{"-DFAKE_NO_GRAPHS"}), check: noGraphs},
	{name: "graphs_bare_capture", needs: []string{"graphs", "streams", "modules", "launches", "device memory"}, skip: bareCaptureSkip,
		setup: withOverride([]string{"-DFAKE_CAPTURE_BARE"}), check: bareCapture},

	// The second group of operations (cases_memops.go, cases_streamops.go):
	// each case checks both branches of the claim (Supports): what the core
	// declares supported works on the fake, the rest answers
	// device.ErrNotSupported.
	{name: "memops", needs: []string{"device memory"}, setup: withOverride(nil), check: memops},
	{name: "stream_ops", needs: []string{"streams", "events", "device memory"}, setup: withOverride(nil), check: streamOps},
	{name: "stream_ops_busy", needs: []string{"stream queries", "asynchronous memset", "streams", "device memory"},
		setup: withOverride(nil, "FAKE_QUERY_BUSY=3"), check: streamOpsBusy},
	{name: "ipc_pci_dmabuf", needs: []string{"device memory"}, setup: withOverride(nil), check: ipcPCIDMABuf},
	{name: "dmabuf_refused", needs: []string{"DMA-buf", "device memory"}, skip: noDMABufAttribute,
		setup: withOverride(nil, "FAKE_DMA_BUF=0"), check: dmaBufRefused},
	{name: "memops_not_supported", setup: withOverride([]string{"-DFAKE_NO_MORE_OPS"}), check: noMemOps},

	{name: "launch_turns", needs: []string{"streams", "modules", "launches", "device memory"}, setup: logged("FAKE_LAUNCH_DWELL_US=300"), check: launchTurns},

	// Module hooks (cases_hooks.go).
	{name: "hooks_scope", needs: []string{"modules", "device memory"}, setup: withOverride(nil), check: hookScope},
	{name: "hooks_failure", needs: []string{"modules", "device memory"}, setup: withOverride(nil), check: hookFailure},
	{name: "hooks_remove", needs: []string{"modules"}, setup: withOverride(nil), check: hookRemove},
	{name: "hooks_parallel", needs: []string{"modules", "device memory"}, setup: withOverride(nil), check: hookParallel},

	// One device record in every tier (cases_record.go).
	{name: "record_exact", setup: withOverride(nil, "FAKE_DEVICE_NAMES=Rec GPU 0,Rec GPU 1"), check: recordExact},
	{name: "record_tiers", skip: noRecordPresence, setup: recordTiersSetup, check: recordTiers},

	// The presence and isolated tiers' facts (cases_tiers.go).
	{name: "facts_tier_is_lazy", setup: logged(), check: factsTierLazy},
	{name: "facts_tier_exact_fails", setup: func(t *testing.T, s *Suite) []string {
		return logged(fmt.Sprintf("FAKE_INIT_RESULT=%d", s.code(100)))(t, s)
	}, check: factsTierExactFails},
}

// logged is withOverride with the fake's call log (FAKE_LOG) in a private
// folder.
func logged(kv ...string) func(t *testing.T, s *Suite) []string {
	return func(t *testing.T, s *Suite) []string {
		return withOverride(nil, append(kv, "FAKE_LOG="+filepath.Join(dltest.PrivateDir(t), "log"))...)(t, s)
	}
}
