//go:build !race

package gpudrvtest

const raceEnabled = false
