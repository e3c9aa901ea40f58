package cli

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flagos-ai/flagshim/device"
)

// Every key of device.Record's JSON is in docs/identity.md's table of the
// record, and every key there is one of the record's; every query field is
// in its table of fields.
func TestRecordIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/identity.md")
	require.NoError(t, err)
	re := regexp.MustCompile("(?m)^\\| `record\\.([a-z_.]+)` \\|")
	var doc []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		doc = append(doc, m[1])
	}
	assert.ElementsMatch(t, jsonPaths(reflect.TypeFor[device.Record](), ""), doc, "device.Record's keys and docs/identity.md's table")
	for _, f := range queryFields {
		assert.Contains(t, string(b), "`"+f.name+"`", "query's field %s is documented", f.name)
	}
	assert.True(t, strings.Contains(string(b), "## The record") && strings.Contains(string(b), "## Present but unusable"),
		"the anchors docs/json.md links to")
}
