package main

import (
	"os"

	"github.com/flagos-ai/flagshim/cli"
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
