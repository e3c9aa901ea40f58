/* An executable for internal/dl's ELF check: built -no-pie (ET_EXEC) and
 * -pie (ET_DYN with DF_1_PIE), neither of which is a shared library. */
int main(void) { return 0; }
