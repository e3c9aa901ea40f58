//go:build !race

package drivertest

const raceEnabled = false
