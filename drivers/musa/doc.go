// Package musa is the Moore Threads MUSA driver API (libmusa.so.1, mu*)
// described as data for flagshim's driver core (package driver). MUSA's
// driver API mirrors CUDA's (muInit, muDeviceGetCount, muCtxSetCurrent,
// muModuleLoadData, ... with CUDA's result numbers under MUSA_ names), so
// its description is CUDA's tables with the mu prefix, its own library and
// its own version encoding (major*10000 + minor*100).
//
// Importing the package does no I/O and registers nothing; flagshim's
// drivers phase creates the backend (musa.New) and registers it and its
// probe. The library is looked for on first use: $FLAGOS_LIBMUSA_PATH (an
// absolute path, no fallback), then libmusa.so.1 and libmusa.so as the
// dynamic loader would resolve them, then /usr/local/musa/lib{,64} and
// /opt/musa/lib*. MUSA_VISIBLE_DEVICES is applied by the driver and only
// reported.
//
// No MUSA hardware exists where flagshim is developed: the package is proven
// against a fake libmusa.so.1 with the real names and signatures, which the
// tests build from C.
package musa
