//go:build race

package drivertest

// raceEnabled: the race detector instruments calls and allocates.
const raceEnabled = true
