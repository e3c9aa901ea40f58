/*
 * A fake libkit.so.1 for the conformance kit's own tests (judge_test.go):
 * the kit's CUDA-shaped fake driver (fake_cufamily.c) under the names of a
 * vendor that exists only there, kit* functions and KIT_ result names. The
 * kit is run on it as described (valid vendors it must accept) and
 * deliberately broken (a Vendor description that lies, or a build with
 * -DFAKE_WAIT_IGNORED), and the test asserts which cases fail. Not
 * embedded: only the kit's own tests build it.
 */
#define FAKE_PREFIX kit
#define FAKE_ERR_PREFIX "KIT_"
#define FAKE_DEFAULT_VERSION 1000
#include "fake_cufamily.c"
