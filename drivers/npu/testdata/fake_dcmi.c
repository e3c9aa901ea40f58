// A fake libdcmi.so for the DCMI binding's tests (drivers/npu): the real
// names, C signatures and structs of Huawei's dcmi_interface_api.h
// (hicann/driver src/custom/include), behaviour driven by the environment:
//
//   FAKE_DCMI_LOG             file each call appends its name to
//   FAKE_DCMI_INIT_RESULT     dcmi_init's return code (default 0)
//   FAKE_DCMI_LIST_RESULT     the card list's return code
//   FAKE_DCMI_CARDS           cards (default 1, at most 64); card i's id is 4*i+1
//   FAKE_DCMI_CARDS_RAW       the card count the card list answers instead
//                             (an int: 4294967295 reads as -1); the list still
//                             holds only FAKE_DCMI_CARDS ids
//   FAKE_DCMI_PER_CARD        NPUs per card (default 1, at most 16)
//   FAKE_DCMI_PER_CARD_RAW    the count dcmi_get_device_num_in_card answers instead
//   FAKE_DCMI_LOGIC_IDS       comma-separated logic ids of the NPUs in card order
//                             (default 0, 1, 2, ...)
//   FAKE_DCMI_CHIP_TYPE       chip_type (default "Ascend")
//   FAKE_DCMI_CHIP_NAMES      comma-separated chip_name per NPU (default "910B3")
//   FAKE_DCMI_HBM_RESULT      dcmi_get_device_hbm_info's return code (-8255:
//                             a chip without HBM); HBM is 65536 MB, 1024 used
//   FAKE_DCMI_HBM_MB          the HBM's size in MB instead
//   FAKE_DCMI_DDR_RESULT      dcmi_get_device_memory_info_v3's; DDR is 24576 MB,
//                             20480 available
//   FAKE_DCMI_HBM_MB, FAKE_DCMI_DDR_MB  the memory sizes answered instead
//   FAKE_DCMI_DRIVER          driver version (default "24.1.rc2")
//   FAKE_DCMI_950             1: an Ascend 950 board, as DRV's DCMI answers
//                             one (dcmi_init_basic.c, dcmi_basic_info_intf.c):
//                             dcmi_init returns DCMI_ERR_CODE_NOT_SUPPORT
//                             (-8255) and the dcmiv2_* calls answer; else
//                             dcmiv2_init returns -8255
//
// NPU k (in card order) is at PCI 0000:(0x18+k):00.0. Build variants:
// -DFAKE_NO_CARD_LIST (only the older dcmi_get_card_num_list),
// -DFAKE_NO_OPTIONAL (no chip info, memory, PCI or driver version),
// -DFAKE_NO_LOGIC_ID (a required function missing), -DFAKE_NO_DCMIV2 (a
// libdcmi from before the dcmiv2_* API). fake_dcmi_layout(i) gives the
// structs' sizes and offsets as gcc lays them out.
#define FAKE_ENV_PREFIX "FAKE_DCMI_"
#define FAKE_DEFAULT_COUNT 1
#include <stddef.h>
#include "fake_env.h"

#define MAX_CHIP_NAME_LEN 32
#define DCMI_OK 0
#define DCMI_ERR_CODE_INVALID_PARAMETER (-8001)
#define DCMI_ERR_CODE_INVALID_DEVICE_ID (-8007)

struct dcmi_chip_info {
    unsigned char chip_type[MAX_CHIP_NAME_LEN];
    unsigned char chip_name[MAX_CHIP_NAME_LEN];
    unsigned char chip_ver[MAX_CHIP_NAME_LEN];
    unsigned int aicore_cnt;
};

struct dcmi_pcie_info_all {
    unsigned int venderid;
    unsigned int subvenderid;
    unsigned int deviceid;
    unsigned int subdeviceid;
    int domain;
    unsigned int bdf_busid;
    unsigned int bdf_deviceid;
    unsigned int bdf_funcid;
    unsigned char reserve[32];
};

struct dcmi_hbm_info {
    unsigned long long memory_size;
    unsigned int freq;
    unsigned long long memory_usage;
    int temp;
    unsigned int bandwith_util_rate;
};

struct dcmi_get_memory_info_stru {
    unsigned long long memory_size;
    unsigned long long memory_available;
    unsigned int freq;
    unsigned long hugepagesize;
    unsigned long hugepages_total;
    unsigned long hugepages_free;
    unsigned int utiliza;
    unsigned char reserve[60];
};

#define EXPORT __attribute__((visibility("default")))

// fake_dcmi_layout: the sizes and offsets drivers/npu/dcmi.go mirrors.
EXPORT unsigned long fake_dcmi_layout(int i) {
    const unsigned long t[] = {
        sizeof(struct dcmi_chip_info), offsetof(struct dcmi_chip_info, chip_name), offsetof(struct dcmi_chip_info, aicore_cnt),
        sizeof(struct dcmi_hbm_info), offsetof(struct dcmi_hbm_info, memory_usage), offsetof(struct dcmi_hbm_info, temp),
        sizeof(struct dcmi_get_memory_info_stru), offsetof(struct dcmi_get_memory_info_stru, memory_available),
        offsetof(struct dcmi_get_memory_info_stru, hugepagesize), offsetof(struct dcmi_get_memory_info_stru, utiliza),
        sizeof(struct dcmi_pcie_info_all), offsetof(struct dcmi_pcie_info_all, domain), offsetof(struct dcmi_pcie_info_all, bdf_funcid),
    };
    return i >= 0 && i < (int)(sizeof t / sizeof t[0]) ? t[i] : 0;
}

static int initialized;

static int cards(void) {
    long n = envlong("FAKE_DCMI_CARDS", 1);
    return n < 0 ? 0 : n > 64 ? 64 : (int)n;
}

static int per_card(void) {
    long n = envlong("FAKE_DCMI_PER_CARD", 1);
    return n < 0 ? 0 : n > 16 ? 16 : (int)n;
}

// npu is the index (in card order) of NPU device_id of card card_id, -1 when none.
static int npu(int card_id, int device_id) {
    if (card_id < 1 || (card_id - 1) % 4 != 0) return -1;
    int c = (card_id - 1) / 4;
    if (c >= cards() || device_id < 0 || device_id >= per_card()) return -1;
    return c * per_card() + device_id;
}

EXPORT int dcmi_init(void) {
    logcall("dcmi_init");
    if (envlong("FAKE_DCMI_950", 0)) return -8255; /* "this product is not support ascend 950." */
    int r = (int)envlong("FAKE_DCMI_INIT_RESULT", 0);
    if (r == 0) initialized = 1;
    return r;
}

static int list_cards(int *card_num, int *card_list, int list_len) {
    if (!initialized) return DCMI_ERR_CODE_INVALID_PARAMETER;
    int r = (int)envlong("FAKE_DCMI_LIST_RESULT", 0);
    if (r) return r;
    if (!card_num || !card_list || list_len <= 0) return DCMI_ERR_CODE_INVALID_PARAMETER;
    int n = cards();
    for (int i = 0; i < n && i < list_len; i++) card_list[i] = 4 * i + 1;
    const char *raw = getenv("FAKE_DCMI_CARDS_RAW");
    *card_num = raw && *raw ? (int)strtoll(raw, NULL, 10) : n;
    return DCMI_OK;
}

#ifndef FAKE_NO_CARD_LIST
EXPORT int dcmi_get_card_list(int *card_num, int *card_list, int list_len) {
    logcall("dcmi_get_card_list");
    return list_cards(card_num, card_list, list_len);
}
#endif

EXPORT int dcmi_get_card_num_list(int *card_num, int *card_list, int list_len) {
    logcall("dcmi_get_card_num_list");
    return list_cards(card_num, card_list, list_len);
}

EXPORT int dcmi_get_device_num_in_card(int card_id, int *device_num) {
    logcall("dcmi_get_device_num_in_card");
    if (!initialized || !device_num) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (npu(card_id, 0) < 0 && per_card() > 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    const char *raw = getenv("FAKE_DCMI_PER_CARD_RAW");
    *device_num = raw && *raw ? (int)strtoll(raw, NULL, 10) : per_card();
    return DCMI_OK;
}

#ifndef FAKE_NO_LOGIC_ID
EXPORT int dcmi_get_device_logic_id(int *device_logic_id, int card_id, int device_id) {
    logcall("dcmi_get_device_logic_id");
    int k = npu(card_id, device_id);
    if (!initialized || !device_logic_id) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    char buf[32];
    *device_logic_id = nth("FAKE_DCMI_LOGIC_IDS", k, buf, sizeof buf) ? atoi(buf) : k;
    return DCMI_OK;
}
#endif

#ifndef FAKE_NO_OPTIONAL
EXPORT int dcmi_get_driver_version(char *driver_ver, unsigned int len) {
    logcall("dcmi_get_driver_version");
    if (!initialized || !driver_ver || len == 0) return DCMI_ERR_CODE_INVALID_PARAMETER;
    const char *v = getenv("FAKE_DCMI_DRIVER");
    snprintf(driver_ver, len, "%s", v && *v ? v : "24.1.rc2");
    return DCMI_OK;
}

EXPORT int dcmi_get_device_chip_info(int card_id, int device_id, struct dcmi_chip_info *chip_info) {
    logcall("dcmi_get_device_chip_info");
    int k = npu(card_id, device_id);
    if (!initialized || !chip_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    memset(chip_info, 0, sizeof *chip_info);
    const char *typ = getenv("FAKE_DCMI_CHIP_TYPE");
    snprintf((char *)chip_info->chip_type, MAX_CHIP_NAME_LEN, "%s", typ ? typ : "Ascend");
    char name[MAX_CHIP_NAME_LEN];
    if (!nth("FAKE_DCMI_CHIP_NAMES", k, name, sizeof name)) snprintf(name, sizeof name, "910B3");
    snprintf((char *)chip_info->chip_name, MAX_CHIP_NAME_LEN, "%s", name);
    snprintf((char *)chip_info->chip_ver, MAX_CHIP_NAME_LEN, "V1");
    chip_info->aicore_cnt = 20;
    return DCMI_OK;
}

EXPORT int dcmi_get_device_hbm_info(int card_id, int device_id, struct dcmi_hbm_info *hbm_info) {
    logcall("dcmi_get_device_hbm_info");
    int k = npu(card_id, device_id);
    if (!initialized || !hbm_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    int r = (int)envlong("FAKE_DCMI_HBM_RESULT", 0);
    if (r) return r;
    memset(hbm_info, 0, sizeof *hbm_info);
    hbm_info->memory_size = (unsigned long long)envlong("FAKE_DCMI_HBM_MB", 65536);
    hbm_info->memory_usage = 1024;
    hbm_info->freq = 1600;
    hbm_info->temp = 40;
    return DCMI_OK;
}

EXPORT int dcmi_get_device_memory_info_v3(int card_id, int device_id, struct dcmi_get_memory_info_stru *memory_info) {
    logcall("dcmi_get_device_memory_info_v3");
    int k = npu(card_id, device_id);
    if (!initialized || !memory_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    int r = (int)envlong("FAKE_DCMI_DDR_RESULT", 0);
    if (r) return r;
    memset(memory_info, 0xff, sizeof *memory_info); // the binding must read only what it should
    memory_info->memory_size = (unsigned long long)envlong("FAKE_DCMI_DDR_MB", 24576);
    memory_info->memory_available = 20480;
    memory_info->freq = 3200;
    memory_info->hugepagesize = 2048;
    memory_info->hugepages_total = 0;
    memory_info->hugepages_free = 0;
    memory_info->utiliza = 16;
    return DCMI_OK;
}

EXPORT int dcmi_get_device_pcie_info_v2(int card_id, int device_id, struct dcmi_pcie_info_all *pcie_info) {
    logcall("dcmi_get_device_pcie_info_v2");
    int k = npu(card_id, device_id);
    if (!initialized || !pcie_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    memset(pcie_info, 0, sizeof *pcie_info);
    pcie_info->venderid = 0x19e5;
    pcie_info->deviceid = 0xd802;
    pcie_info->domain = 0;
    pcie_info->bdf_busid = 0x18 + (unsigned)k;
    pcie_info->bdf_deviceid = 0;
    pcie_info->bdf_funcid = 0;
    return DCMI_OK;
}
#endif

#ifndef FAKE_NO_DCMIV2
/* The dcmiv2_* API of dcmi_interface_api.h, for Ascend 950 boards: devices
   by logic id, the v1 structs, and struct dcmi_chip_info_v2. */
#define DCMI_ERR_CODE_NOT_SUPPORT (-8255)

struct dcmi_chip_info_v2 {
    unsigned char chip_type[MAX_CHIP_NAME_LEN];
    unsigned char chip_name[MAX_CHIP_NAME_LEN];
    unsigned char chip_ver[MAX_CHIP_NAME_LEN];
    unsigned int aicore_cnt;
    unsigned char npu_name[MAX_CHIP_NAME_LEN];
};

EXPORT unsigned long fake_dcmi_layout_v2(int i) {
    const unsigned long t[] = {sizeof(struct dcmi_chip_info_v2), offsetof(struct dcmi_chip_info_v2, npu_name)};
    return i >= 0 && i < 2 ? t[i] : 0;
}

static int v2_initialized;

/* logic_npu is the NPU (in card order) whose logic id is id, -1 when none. */
static int logic_npu(int id) {
    char buf[32];
    for (int k = 0; k < cards() * per_card(); k++)
        if ((nth("FAKE_DCMI_LOGIC_IDS", k, buf, sizeof buf) ? atoi(buf) : k) == id) return k;
    return -1;
}

EXPORT int dcmiv2_init(void) {
    logcall("dcmiv2_init");
    if (!envlong("FAKE_DCMI_950", 0)) return DCMI_ERR_CODE_NOT_SUPPORT; /* "dcmiv2_init仅支持A5场景" */
    int r = (int)envlong("FAKE_DCMI_INIT_RESULT", 0);
    if (r == 0) v2_initialized = 1;
    return r;
}

EXPORT int dcmiv2_get_device_list(int *device_list, int *device_cnt, int list_len) {
    logcall("dcmiv2_get_device_list");
    if (!device_list || !device_cnt || list_len <= 0) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (!v2_initialized) return -8005; /* DCMI_ERR_CODE_INNER_ERR: "dcmi is not init." */
    int n = cards() * per_card(), cnt = 0;
    char buf[32];
    for (int k = 0; k < n && cnt < list_len; k++)
        device_list[cnt++] = nth("FAKE_DCMI_LOGIC_IDS", k, buf, sizeof buf) ? atoi(buf) : k;
    for (int i = 1; i < cnt; i++) /* sorted, as DRV's qsort leaves them */
        for (int j = i; j > 0 && device_list[j - 1] > device_list[j]; j--) {
            int x = device_list[j]; device_list[j] = device_list[j - 1]; device_list[j - 1] = x;
        }
    const char *raw = getenv("FAKE_DCMI_CARDS_RAW");
    *device_cnt = raw && *raw ? (int)strtoll(raw, NULL, 10) : cnt;
    return DCMI_OK;
}

EXPORT int dcmiv2_get_driver_version(char *driver_ver, unsigned int len) {
    logcall("dcmiv2_get_driver_version");
    if (!v2_initialized || !driver_ver || len == 0) return DCMI_ERR_CODE_INVALID_PARAMETER;
    const char *v = getenv("FAKE_DCMI_DRIVER");
    snprintf(driver_ver, len, "%s", v && *v ? v : "25.5.0");
    return DCMI_OK;
}

EXPORT int dcmiv2_get_device_chip_info(int dev_id, struct dcmi_chip_info_v2 *chip_info) {
    logcall("dcmiv2_get_device_chip_info");
    int k = logic_npu(dev_id);
    if (!v2_initialized || !chip_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    memset(chip_info, 0, sizeof *chip_info);
    const char *typ = getenv("FAKE_DCMI_CHIP_TYPE");
    snprintf((char *)chip_info->chip_type, MAX_CHIP_NAME_LEN, "%s", typ ? typ : "Ascend");
    char name[MAX_CHIP_NAME_LEN];
    if (!nth("FAKE_DCMI_CHIP_NAMES", k, name, sizeof name)) snprintf(name, sizeof name, "950PR");
    snprintf((char *)chip_info->chip_name, MAX_CHIP_NAME_LEN, "%s", name);
    snprintf((char *)chip_info->chip_ver, MAX_CHIP_NAME_LEN, "V1");
    snprintf((char *)chip_info->npu_name, MAX_CHIP_NAME_LEN, "npu");
    chip_info->aicore_cnt = 32;
    return DCMI_OK;
}

EXPORT int dcmiv2_get_device_hbm_info(int dev_id, struct dcmi_hbm_info *hbm_info) {
    logcall("dcmiv2_get_device_hbm_info");
    int k = logic_npu(dev_id);
    if (!v2_initialized || !hbm_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    int r = (int)envlong("FAKE_DCMI_HBM_RESULT", 0);
    if (r) return r;
    memset(hbm_info, 0, sizeof *hbm_info);
    hbm_info->memory_size = 131072;
    hbm_info->memory_usage = 2048;
    return DCMI_OK;
}

EXPORT int dcmiv2_get_device_pcie_info(int dev_id, struct dcmi_pcie_info_all *pcie_info) {
    logcall("dcmiv2_get_device_pcie_info");
    int k = logic_npu(dev_id);
    if (!v2_initialized || !pcie_info) return DCMI_ERR_CODE_INVALID_PARAMETER;
    if (k < 0) return DCMI_ERR_CODE_INVALID_DEVICE_ID;
    memset(pcie_info, 0, sizeof *pcie_info);
    pcie_info->venderid = 0x19e5;
    pcie_info->bdf_busid = 0x18 + (unsigned)k;
    return DCMI_OK;
}
#endif
