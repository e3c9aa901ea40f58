/* A tiny library for internal/dl's tests. Built by the tests with
 * `go env CC` -shared -fPIC; -Wl,-soname,libdltest.so.1 is set by the test. */
int dltest_answer(void) { return 42; }
#ifdef WITH_V2
int dltest_answer_v2(void) { return 43; }
#endif
