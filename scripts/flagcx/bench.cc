// The paired speed benchmark of the FlagCX plugin: each operation through
// FlagCX's device handle (flagcxDeviceHandleInit), with whichever adaptor
// FlagCX loads. scripts/flagcx-gpu.sh runs it alternately without and with
// FLAGCX_DEVICE_ADAPTOR_PLUGIN and compares. Prints one line per
// operation: "<name> <value> <unit>", the median of 5 chunks (ns per
// operation, or GB/s for the 64 MiB copies), each timed loop after a
// warm-up loop of the same length.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "flagcx.h"

static flagcxDeviceHandle_t dev;

#define CHECK(x)                                                               \
  do {                                                                         \
    flagcxResult_t r_ = (x);                                                   \
    if (r_ != flagcxSuccess) {                                                 \
      std::fprintf(stderr, "FAIL %s: flagcxResult %d\n", #x, (int)r_);         \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// median ns of one op: 5 chunks of n ops each, after a warm-up chunk of n
// (the driver's caches, the allocator's pools and the plugin's first calls
// settle before anything is timed).
static double nsPerOp(int n, const std::function<void()> &op) {
  for (int i = 0; i < n; i++) op();
  std::vector<double> chunks;
  for (int c = 0; c < 5; c++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; i++) op();
    auto t1 = std::chrono::steady_clock::now();
    chunks.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  std::sort(chunks.begin(), chunks.end());
  return chunks[2];
}

int main() {
  CHECK(flagcxDeviceHandleInit(&dev));
  CHECK(dev->setDevice(0));
  flagcxStream_t s;
  CHECK(dev->streamCreate(&s));
  flagcxEvent_t ev;
  CHECK(dev->eventCreate(&ev, flagcxEventDisableTiming));

  std::printf("stream_create_destroy %.1f ns\n", nsPerOp(20000, [] {
    flagcxStream_t t;
    CHECK(dev->streamCreate(&t));
    CHECK(dev->streamDestroy(t));
  }));
  std::printf("event_record_sync %.1f ns\n", nsPerOp(20000, [&] {
    CHECK(dev->eventRecord(ev, s));
    CHECK(dev->eventSynchronize(ev));
  }));
  void *h4, *d4;
  CHECK(dev->deviceMalloc(&h4, 4, flagcxMemHost, nullptr));
  CHECK(dev->deviceMalloc(&d4, 4, flagcxMemDevice, nullptr));
  std::printf("roundtrip_4B %.1f ns\n", nsPerOp(20000, [&] {
    CHECK(dev->deviceMemcpy(d4, h4, 4, flagcxMemcpyHostToDevice, s));
    CHECK(dev->deviceMemcpy(h4, d4, 4, flagcxMemcpyDeviceToHost, s));
    CHECK(dev->streamSynchronize(s));
  }));
  std::printf("malloc_free_1MiB %.1f ns\n", nsPerOp(2000, [] {
    void *p;
    CHECK(dev->deviceMalloc(&p, 1 << 20, flagcxMemDevice, nullptr));
    CHECK(dev->deviceFree(p, flagcxMemDevice, nullptr));
  }));
  const size_t big = 64 << 20;
  void *hb, *da, *db;
  CHECK(dev->deviceMalloc(&hb, big, flagcxMemHost, nullptr));
  CHECK(dev->deviceMalloc(&da, big, flagcxMemDevice, nullptr));
  CHECK(dev->deviceMalloc(&db, big, flagcxMemDevice, nullptr));
  std::memset(hb, 1, big);
  struct { const char *name; void *dst, *src; flagcxMemcpyType_t kind; } copies[] = {
      {"h2d_64MiB", da, hb, flagcxMemcpyHostToDevice},
      {"d2h_64MiB", hb, da, flagcxMemcpyDeviceToHost},
      {"d2d_64MiB", db, da, flagcxMemcpyDeviceToDevice},
  };
  for (auto &c : copies) {
    double ns = nsPerOp(20, [&] {
      CHECK(dev->deviceMemcpy(c.dst, c.src, big, c.kind, s));
      CHECK(dev->streamSynchronize(s));
    });
    std::printf("%s %.2f GB/s\n", c.name, double(big) / ns);
  }
  CHECK(dev->deviceFree(hb, flagcxMemHost, nullptr));
  CHECK(dev->deviceFree(da, flagcxMemDevice, nullptr));
  CHECK(dev->deviceFree(db, flagcxMemDevice, nullptr));
  CHECK(dev->deviceFree(h4, flagcxMemHost, nullptr));
  CHECK(dev->deviceFree(d4, flagcxMemDevice, nullptr));
  CHECK(dev->eventDestroy(ev));
  CHECK(dev->streamDestroy(s));
  CHECK(flagcxDeviceHandleFree(dev));
  return 0;
}
