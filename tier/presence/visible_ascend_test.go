package presence

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The cases follow Runtime::GetVisibleDevices and SplitString
// (hicann/runtime src/runtime/core/src/runtime.cc) step by step.
func TestVisibleAscendRT(t *testing.T) {
	for _, c := range []struct {
		value string
		n     int
		want  []int
		note  string // a part of the note; "" for none
	}{
		{"0", 4, []int{0}, ""},
		{"1,3", 4, []int{1, 3}, ""},
		{"0,1,2,3", 4, []int{0, 1, 2, 3}, ""},
		{"007,8", 9, []int{7, 8}, ""},                       // std::stoi
		{"1,2x", 4, []int{1, 2}, ""},                        // the run before the stop counts
		{"1,2,", 4, []int{1, 2}, ""},                        // a final comma
		{"1, 2", 4, []int{1}, ""},                           // a space ends the list
		{"1,,2", 4, []int{1}, ""},                           // two commas in a row end it
		{"1,5,2", 4, []int{1}, ""},                          // past the last device ends it before the order check
		{"0,1,2,3,4", 2, []int{0, 1}, ""},                   // as many as there are devices
		{"1,99999999999,2", 4, []int{1}, ""},                // past 2^31-1
		{"2147483647", 4, []int{}, "selects no device"},     // int's largest is past the devices
		{"", 4, []int{}, "selects no device"},               // set and empty
		{" 1", 4, []int{}, "selects no device"},             // must start with a digit
		{"-1", 4, []int{}, "selects no device"},             // no sign
		{"+1", 4, []int{}, "selects no device"},             //
		{"GPU-1234", 4, []int{}, "selects no device"},       // no UUIDs
		{"npu-0", 4, []int{}, "selects no device"},          // no names (those are the container runtime's)
		{"4", 4, []int{}, "selects no device"},              // past the last
		{"2,1", 4, []int{}, "not in ascending order"},       // the whole list is refused
		{"0,2,1", 4, []int{}, "not in ascending order"},     //
		{"1,1", 4, []int{}, "repeats device 1"},             //
		{"0,1,1,2", 4, []int{}, "repeats device 1"},         //
		{"0,01", 4, []int{0, 1}, ""},                        // "01" is 1
		{"3,2", 2, []int{}, "selects no device"},            // 3 ends the list before 2 is read
		{"1", 0, []int{}, ""},                               // no device to select: no note
		{strings.Repeat("0", 127) + "1,2", 4, []int{1}, ""}, // only 128 bytes are read: ",2" is cut
	} {
		got, note := selectAscendRT(c.value, c.n)
		assert.Equal(t, c.want, got, "%q over %d devices", c.value, c.n)
		if c.note == "" {
			assert.Empty(t, note, "%q", c.value)
		} else {
			assert.Contains(t, note, c.note, "%q", c.value)
		}
	}
}

func TestVisibleAscendRTRenumbers(t *testing.T) {
	devs := []Device{{SourceIndex: 10, Name: "a"}, {SourceIndex: 11, Name: "b"}, {SourceIndex: 12, Name: "c"}}
	got, note := VisibleAscendRT(devs, "0,2")
	assert.Empty(t, note)
	assert.Equal(t, []Device{{Index: 0, SourceIndex: 10, Name: "a"}, {Index: 1, SourceIndex: 12, Name: "c"}}, got)
	got, note = VisibleAscendRT(devs, "2,0")
	assert.Empty(t, got)
	assert.Contains(t, note, `"2,0" is not in ascending order`)
}
