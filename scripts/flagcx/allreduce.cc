// A one-rank FlagCX communicator and an all-reduce through NCCL, with
// whichever device adaptor FlagCX loads (its built-in one, or the plugin
// that FLAGCX_DEVICE_ADAPTOR_PLUGIN names). FlagCX's NCCL adaptor reads the
// native stream from the adaptor's stream object (stream->base): this is the
// check of that layout. Prints "allreduce ok <count> floats" or a FAIL line.
// Built by scripts/flagcx-gpu.sh against FlagCX's headers and library.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "flagcx.h"

#define CHECK(x)                                                              \
  do {                                                                        \
    flagcxResult_t r_ = (x);                                                  \
    if (r_ != flagcxSuccess) {                                                \
      std::printf("FAIL %s: flagcxResult %d (line %d)\n", #x, (int)r_, __LINE__); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main() {
  const size_t count = 1 << 20;
  flagcxDeviceHandle_t dev = nullptr;
  CHECK(flagcxDeviceHandleInit(&dev));
  CHECK(dev->setDevice(0));
  char vendor[128] = {0};
  CHECK(dev->getVendor(vendor));
  std::printf("vendor %s\n", vendor);
  flagcxStream_t stream = nullptr;
  CHECK(dev->streamCreate(&stream));
  flagcxUniqueId id;
  std::memset(&id, 0, sizeof id);
  CHECK(flagcxGetUniqueId(&id));
  flagcxComm_t comm = nullptr;
  CHECK(flagcxCommInitRank(&comm, 1, &id, 0));
  void *send = nullptr, *recv = nullptr, *host = nullptr;
  CHECK(dev->deviceMalloc(&send, count * sizeof(float), flagcxMemDevice, nullptr));
  CHECK(dev->deviceMalloc(&recv, count * sizeof(float), flagcxMemDevice, nullptr));
  CHECK(dev->deviceMalloc(&host, count * sizeof(float), flagcxMemHost, nullptr));
  float *h = static_cast<float *>(host);
  for (size_t i = 0; i < count; i++) h[i] = float(i % 977) * 0.5f;
  CHECK(dev->deviceMemcpy(send, host, count * sizeof(float), flagcxMemcpyHostToDevice, stream));
  CHECK(dev->deviceMemset(recv, 0, count * sizeof(float), flagcxMemDevice, stream));
  CHECK(flagcxAllReduce(send, recv, count, flagcxFloat, flagcxSum, comm, stream));
  CHECK(dev->streamSynchronize(stream));
  std::memset(host, 0xff, count * sizeof(float));
  CHECK(dev->deviceMemcpy(host, recv, count * sizeof(float), flagcxMemcpyDeviceToHost, stream));
  CHECK(dev->streamSynchronize(stream));
  for (size_t i = 0; i < count; i++) {
    if (h[i] != float(i % 977) * 0.5f) {
      std::printf("FAIL element %zu: %g, want %g\n", i, h[i], float(i % 977) * 0.5f);
      return 1;
    }
  }
  CHECK(flagcxCommDestroy(comm));
  CHECK(dev->deviceFree(send, flagcxMemDevice, nullptr));
  CHECK(dev->deviceFree(recv, flagcxMemDevice, nullptr));
  CHECK(dev->deviceFree(host, flagcxMemHost, nullptr));
  CHECK(dev->streamDestroy(stream));
  CHECK(flagcxDeviceHandleFree(dev));
  std::printf("allreduce ok %zu floats\n", count);
  return 0;
}
