package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flagos-ai/flagshim"
)

// TestMain lets testscript run this binary as flagshim-acme, each invocation
// in a process of its own (Init runs once per process).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"flagshim-acme": main})
}

// TestScripts runs testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			for _, v := range flagshim.Variables() {
				env.Setenv(v.Name, "")
			}
			for _, v := range []string{"ACME_DEVICES", "ACME_CUDA_COMPAT"} {
				env.Setenv(v, "")
			}
			return nil
		},
	})
}
