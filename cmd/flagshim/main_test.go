package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/flagos-ai/flagshim/internal/cli"
)

// TestMain lets testscript run this binary as the flagshim command, each
// invocation in a process of its own (Init runs once per process).
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flagshim": func() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs testdata/script/*.txtar: the CLI's human output, exit
// codes and messages, so a change in wording is a reviewed diff.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:   "testdata/script",
		Setup: setupScriptEnv,
	})
}

// setupScriptEnv gives every script the same environment: no variable of
// the host leaks in, and no library is searched for outside what the script
// names.
func setupScriptEnv(env *testscript.Env) error {
	for _, v := range cli.EnvVars {
		env.Setenv(v, "")
	}
	return nil
}
