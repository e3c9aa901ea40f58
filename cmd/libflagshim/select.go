package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/flagos-ai/flagshim"
	"github.com/flagos-ai/flagshim/device"
	"github.com/flagos-ai/flagshim/report"
)

// selectJSON is flagshim_select_json's answer: `flagshim select --json`'s
// object for the devices (comma-separated) of device type typ.
func selectJSON(typ, devices string) (string, failure) {
	if _, err := initHost(); errors.Is(err, flagshim.ErrBadSetting) {
		setErr(err)
		return "", failInit
	}
	t, err := device.Parse(typ)
	if err != nil || t.Index >= 0 {
		setErr(fmt.Errorf("flagshim_select_json: %q is not a device type (cuda, hip, npu, ...)", typ))
		return "", failDevice
	}
	specs := strings.Split(devices, ",")
	if devices == "" {
		specs = nil
	}
	sel, err := flagshim.SelectEnv(context.Background(), device.Type(typ), specs...)
	if err != nil {
		setErr(fmt.Errorf("flagshim_select_json: %w", err))
		return "", failSelect
	}
	b, err := json.Marshal(report.SelectionOf(sel))
	if err != nil {
		setErr(fmt.Errorf("flagshim_select_json: the answer cannot be written as JSON: %w", err))
		return "", failSelect
	}
	return string(b), failNone
}
