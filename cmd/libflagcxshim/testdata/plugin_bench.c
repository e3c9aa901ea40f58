/*
 * The plugin's hot fields timed on whatever driver it finds (the fakes, in
 * BenchmarkPluginFields): the four paired cases of scripts/flagcx-gpu.sh's
 * benchmark, as a C loop over the fields, without FlagCX, and two queries
 * of idle work (the fields' own cost, without the fake's synchronization,
 * which dominates the others there). Prints
 * "NAME NS_PER_OP" per case, the median of 5 runs.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flagcx_v1.h"

static struct flagcxDeviceAdaptor_v1 a;

#define OK(call) do { if ((call) != flagcxSuccess) { printf("FAIL %s\n", #call); exit(1); } } while (0)

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *x, const void *y) { double d = *(const double *)x - *(const double *)y; return (d > 0) - (d < 0); }

int main(int argc, char **argv) {
	if (argc != 3) { fprintf(stderr, "usage: %s PLUGIN ITERATIONS\n", argv[0]); return 2; }
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { printf("FAIL dlopen: %s\n", dlerror()); return 1; }
	memcpy(&a, dlsym(h, "flagcxDeviceAdaptorPlugin_v1"), sizeof a);
	int n = atoi(argv[2]);
	OK(a.setDevice(0));
	flagcxStream_t s;
	flagcxEvent_t e;
	void *hp, *dp;
	OK(a.streamCreate(&s));
	OK(a.eventCreate(&e, flagcxEventDisableTiming));
	OK(a.deviceMalloc(&hp, 4, flagcxMemHost, NULL));
	OK(a.deviceMalloc(&dp, 4, flagcxMemDevice, NULL));
	const char *names[] = {"stream_create_destroy", "event_record_sync", "roundtrip_4B", "malloc_free_1MiB", "stream_query_idle", "event_query_done"};
	OK(a.eventRecord(e, s));
	OK(a.streamSynchronize(s));
	/* stream create+destroy last: the fake keeps every stream it made in a
	 * list that its stream and event calls walk */
	static const int order[] = {4, 5, 3, 1, 2, 0};
	for (int k = 0; k < 6; k++) {
		int c = order[k];
		double runs[5];
		for (int r = 0; r < 5; r++) {
			double t0 = now();
			for (int i = 0; i < n; i++) {
				switch (c) {
				case 0: { flagcxStream_t x; OK(a.streamCreate(&x)); OK(a.streamDestroy(x)); break; }
				case 1: OK(a.eventRecord(e, s)); OK(a.eventSynchronize(e)); break;
				case 2:
					OK(a.deviceMemcpy(dp, hp, 4, flagcxMemcpyHostToDevice, s, NULL));
					OK(a.deviceMemcpy(hp, dp, 4, flagcxMemcpyDeviceToHost, s, NULL));
					OK(a.streamSynchronize(s));
					break;
				case 4: OK(a.streamQuery(s)); break;
				case 5: OK(a.eventQuery(e)); break;
				default: { void *m; OK(a.deviceMalloc(&m, 1 << 20, flagcxMemDevice, NULL)); OK(a.deviceFree(m, flagcxMemDevice, NULL)); }
				}
			}
			runs[r] = (now() - t0) / n;
		}
		qsort(runs, 5, sizeof runs[0], cmp);
		printf("%s %.1f\n", names[c], runs[2]);
	}
	OK(a.deviceFree(dp, flagcxMemDevice, NULL));
	OK(a.deviceFree(hp, flagcxMemHost, NULL));
	OK(a.eventDestroy(e));
	OK(a.streamDestroy(s));
	return 0;
}
