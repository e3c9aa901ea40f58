/* A library that finds its dependency (libdlneed.so.1) beside itself
 * through RUNPATH $ORIGIN, as ROCm's libamdhip64 and pip wheels' libraries
 * do: loaded through /proc/self/fd/N, $ORIGIN would be /proc/self/fd. */
int need_answer(void);
int origin_answer(void) { return need_answer() + 1; }
