//go:build race

package gpudrvtest

// raceEnabled: the race detector instruments calls and allocates.
const raceEnabled = true
