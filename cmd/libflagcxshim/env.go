package main

// directEnv turns the direct calls off when "0" (every field then enters
// Go, as before them: for comparing the two).
const directEnv = "FLAGOS_FLAGCX_DIRECT"
