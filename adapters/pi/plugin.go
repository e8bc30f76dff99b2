package pi

import (
	"bytes"
	_ "embed"
	"encoding/json"
)

//go:embed extension.js
var extension []byte

// binPlaceholder is where Extension writes the aep-hook path.
var binPlaceholder = []byte("__AEP_HOOK_BIN__")

// ExtensionFile is the file name the extension is placed under in pi's
// auto-discovered extensions folder (~/.pi/agent/extensions/).
const ExtensionFile = "aep-hook.js"

// Extension returns the pi extension with bin, the aep-hook binary it
// starts, written in (escaped as a JavaScript string's content).
func Extension(bin string) []byte {
	q, _ := json.Marshal(bin)
	return bytes.Replace(extension, binPlaceholder, q[1:len(q)-1], 1)
}
