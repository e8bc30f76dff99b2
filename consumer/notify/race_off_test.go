//go:build !race

package notify

const raceOn = false
