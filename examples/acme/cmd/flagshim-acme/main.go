package main

import (
	"os"

	"github.com/flagos-ai/flagshim/cli"
	_ "github.com/flagos-ai/flagshim/examples/acme" // registers Acme with vendors.Register
)

func main() { os.Exit(cli.Run(os.Args[1:], os.Stdout, os.Stderr)) }
