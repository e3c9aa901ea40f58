/* A library that must never be loaded: internal/dl's tests place it where
 * an unsafe search would find it. Its ELF constructor runs at dlopen, before
 * any check after the fact could refuse it, and appends DLTEST_TAG to the
 * file named by $DLTEST_MARKER. Built with -Wl,-soname,libdltest.so.1 so it
 * passes for the real thing; dltest_answer says 7, the safe copy 42. */
#include <stdio.h>
#include <stdlib.h>

#ifndef DLTEST_TAG
#define DLTEST_TAG "marker"
#endif

__attribute__((constructor)) static void dltest_mark(void) {
	const char *p = getenv("DLTEST_MARKER");
	if (p == NULL || *p == '\0')
		return;
	FILE *f = fopen(p, "a");
	if (f == NULL)
		return;
	fputs(DLTEST_TAG "\n", f);
	fclose(f);
}

int dltest_answer(void) { return 7; }
