//go:build aepfull

package main

import _ "embed"

// fullBinary is the full aep-hook for this platform, placed beside this
// file by the build (make build) before this package is compiled.
//
//go:embed aep-hook.full
var fullBinary string
