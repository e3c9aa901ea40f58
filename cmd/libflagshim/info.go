package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim/cli"
)

// infoJSON is what `flagshim info --json` prints for this process, on one
// line (compact JSON: the same object).
func infoJSON() (string, failure) {
	initHost()
	var out, errOut bytes.Buffer
	if code := cli.Run([]string{"info", "--json"}, &out, &errOut); code != 0 || out.Len() == 0 {
		setErr(fmt.Errorf("%s", strings.TrimSpace(errOut.String())))
		return "", failInit
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, out.Bytes()); err != nil {
		setErr(fmt.Errorf("flagshim: info --json printed invalid JSON: %w", err))
		return "", failInit
	}
	return compact.String(), failNone
}
