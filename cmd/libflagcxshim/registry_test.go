package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/internal/dl/dltest"
)

// TestRegistryConcurrent builds the plugin's object registry (registry.c)
// with its C test (testdata/registry_test.c) under ThreadSanitizer, where
// the compiler has it, and with FX_POISON (retired table blocks poisoned at
// once), and runs it: writer threads churn objects, rebuilding the table
// again and again, while reader threads look objects up without a lock.
// It fails when a lookup returns another object's entry or a poisoned one
// (an answer kept from a retired block), finds a forgotten object, when
// ThreadSanitizer sees a data race (a block freed under a reader, a field
// read without the atomics), or when churn grows the table or keeps
// allocating blocks.
func TestRegistryConcurrent(t *testing.T) {
	cc := dltest.CC()
	if runtime.GOOS != "linux" || cc == "" {
		t.Skip("the registry's C test needs Linux and a C compiler (`go env CC` names none installed)")
	}
	dir := dltest.PrivateDir(t)
	build := func(name string, flags ...string) (string, error) {
		prog := filepath.Join(dir, name)
		args := append(strings.Fields(cc)[1:], "-std=c11", "-D_GNU_SOURCE", "-DFX_POISON", "-Wall", "-Wextra", "-Werror", "-g")
		args = append(append(args, flags...), "-o", prog, dltest.Abs(t, "testdata/registry_test.c"), dltest.Abs(t, "registry.c"), "-pthread")
		out, err := exec.Command(strings.Fields(cc)[0], args...).CombinedOutput()
		if err == nil {
			err = exec.Command(prog, "1").Run() // the sanitizer's runtime loads
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w: %s", name, err, out)
		}
		return prog, nil
	}
	// -Wno-tsan: ThreadSanitizer does not model atomic_thread_fence (GCC
	// warns); every access the fences order is an atomic one, so it
	// reports no race from them.
	prog, err := build("registry_tsan", "-O1", "-fsanitize=thread", "-Wno-tsan")
	iterations := "100000"
	if err != nil {
		t.Logf("no ThreadSanitizer here (%v): the test runs without it, poisoning still on", err)
		prog, err = build("registry", "-O2")
		require.NoError(t, err)
		iterations = "1000000"
	}
	out, err := exec.Command(prog, iterations).CombinedOutput()
	t.Logf("%s", out)
	require.NoError(t, err, "the registry's C test failed: %s", out)
	assert.Contains(t, string(out), "ok churn")
	assert.NotContains(t, string(out), "ThreadSanitizer")
}
