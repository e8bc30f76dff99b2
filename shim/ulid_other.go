//go:build !linux

package shim

import "crypto/rand"

// osRandom fills b from the operating system's CSPRNG.
func osRandom(b []byte) { rand.Read(b) }
