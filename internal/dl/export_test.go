package dl

// WithSystem gives spec its own ld.so.cache (cache, "" for none) and default
// folders instead of this machine's, for tests of the soname search.
func WithSystem(spec Spec, cache string, defaults ...string) Spec {
	spec.sys = &system{cache: cache, defaults: defaults}
	return spec
}

// BuildCache writes an ld.so.cache image in format "new", "old" or
// "compat" (old entries followed by a whole new-format cache) holding
// entries, each {soname, file} with this machine's default flags.
func BuildCache(format string, entries ...[2]string) []byte {
	es := make([]cacheEntry, len(entries))
	for i, e := range entries {
		es[i] = cacheEntry{Flags: cacheDefaultID, Key: e[0], Value: e[1]}
	}
	return buildCache(format, es)
}

// OpenError is the loader's error type, for the tests that match it with
// errors.As (outside the package its facts are read with FailureOf).
type OpenError = openError
