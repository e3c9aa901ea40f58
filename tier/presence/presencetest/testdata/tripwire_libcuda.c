// A tripwire libcuda.so.1: it records being loaded (a constructor) and any
// cuInit call in FAKE_TRIPWIRE_LOG. presence's tests put it first on
// LD_LIBRARY_PATH and check that no source loads it.
#include <stdio.h>
#include <stdlib.h>

static void logline(const char *s) {
    const char *p = getenv("FAKE_TRIPWIRE_LOG");
    if (!p || !*p) return;
    FILE *f = fopen(p, "a");
    if (!f) return;
    fprintf(f, "%s\n", s);
    fclose(f);
}

__attribute__((constructor)) static void loaded(void) { logline("loaded"); }

int cuInit(unsigned int flags) {
    (void)flags;
    logline("cuInit");
    return 0;
}
