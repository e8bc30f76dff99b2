//go:build !race

package relay_test

const raceOn = false
