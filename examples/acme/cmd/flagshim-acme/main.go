package main

import (
	"os"

	_ "github.com/flagos-ai/flagshim/examples/acme" // registers acme's steps with flagshim.AddStep
	"github.com/flagos-ai/flagshim/internal/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
