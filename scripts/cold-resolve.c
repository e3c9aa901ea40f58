/*
 * The cold start of a C host: a process that links libflagshim.so, asks
 * flagshim_resolve("cuda:0") once and exits, for scripts/cold-start.py.
 * Build (cmd/libflagshim's flagshim.h, the library beside it as
 * libflagshim.so):
 *
 *   cc -O2 -Icmd/libflagshim -o cold-resolve scripts/cold-resolve.c -LDIR -lflagshim -Wl,-rpath,DIR
 */
#include <stdio.h>

#include "flagshim.h"

int main(void) {
	char out[64];
	int n = flagshim_resolve("cuda:0", out, sizeof out);
	if (n < 0) {
		char msg[512];
		flagshim_error(msg, sizeof msg);
		fprintf(stderr, "cold-resolve: flagshim_resolve(cuda:0) = %d: %s\n", n, msg);
		return 1;
	}
	printf("%s\n", out);
	return 0;
}
