//go:build !aepfull

package main

// fullBinary is empty in a build without the full binary inside (go build
// without the aepfull tag): such a build looks for aep-hook-full beside
// itself.
var fullBinary string
