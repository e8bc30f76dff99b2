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

// posturePrefix begins the extension's line holding the control posture
// install wrote; the line is the prefix, a JSON object and ";".
var posturePrefix = []byte("const POSTURE = ")

// Extension returns the pi extension with bin, the aep-hook binary it
// starts, written in (escaped as a JavaScript string's content).
func Extension(bin string) []byte { return ExtensionFor(bin, nil) }

// ExtensionFor is Extension with a control posture written in: the
// environment settings (AEP_CONTROL, AEP_RELAY, AEP_CONTROL_BUDGET,
// AEP_CONTROL_TOOLS) the extension uses where pi's environment does not
// set them, and hands its held runs. The relay token is never among them.
func ExtensionFor(bin string, posture map[string]string) []byte {
	q, _ := json.Marshal(bin)
	out := bytes.Replace(extension, binPlaceholder, q[1:len(q)-1], 1)
	if len(posture) == 0 {
		return out
	}
	p, _ := json.Marshal(posture) // sorted keys: the same posture writes the same file
	line := append(append([]byte{}, posturePrefix...), "{};"...)
	return bytes.Replace(out, line, append(append(append([]byte{}, posturePrefix...), p...), ';'), 1)
}

// Posture reads back the control posture written into an extension file
// (nil when there is none).
func Posture(file []byte) map[string]string {
	i := bytes.Index(file, append([]byte("\n"), posturePrefix...))
	if i < 0 {
		return nil
	}
	rest := file[i+1+len(posturePrefix):]
	end := bytes.Index(rest, []byte(";\n"))
	if end < 0 {
		return nil
	}
	var p map[string]string
	if json.Unmarshal(rest[:end], &p) != nil || len(p) == 0 {
		return nil
	}
	return p
}
