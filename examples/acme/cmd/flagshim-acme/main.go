package main

import (
	"os"

	"github.com/flagos-ai/flagshim/cli"
	_ "github.com/flagos-ai/flagshim/examples/acme" // registers acme's steps with flagshim.AddStep
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
