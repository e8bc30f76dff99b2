//go:build !race

package jsonbound

const raceEnabled = false
