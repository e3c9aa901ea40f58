/* The dependency of libdlorigin.c, found only through its $ORIGIN RUNPATH
 * (it sits beside it, on no search path). */
int need_answer(void) { return 5; }
