// Package adapters holds the transports, one package each, that feed the
// mapping tables their moments: hook (stdin shims), acp (the stdio tee),
// agui and a2a (the HTTP tees, on httptee), otlp (the sidecar receiver),
// the stream bridges on follow (opencode over sse; kimiweb, openhands and
// openclaw over ws) and the plugin forwarders (forward, with pi's
// extension and opencode's plugin). An adapter reads and
// frames its wire, resolves what the wire says about each message (its
// kind, direction, method, ids, the session, thread and run it belongs to,
// a decoded record) into typed mapping.Facts, and hands the moments to the
// shim emitter (shim.Handler), in batches when a stream has several ready.
// It never builds an envelope and never re-encodes a payload for a table.
//
// This file is the one place a JSON input line becomes moments for a
// transport that is not live: `aep-hook map` and the conformance harness
// (harness/pins) call Decode, which asks the table's transport adapter,
// so a pin's input reaches its table with the same facts the live adapter
// would give it.
//
// Adding a vendor:
//
//   - on an existing transport: its table file in mapping/ (Transport set,
//     and for TransportOTLP a Detect rule) and one line in
//     mapping.Vendors(). The receiver, the map verb, the pins harness and
//     --help find it through the registry.
//   - on a new transport (an SSE or WebSocket bridge, a plugin forwarder):
//     also one adapter package here, which fills the Facts its
//     mapping.Transport constant documents, exports a Decode for its JSON
//     moment form, and is named in the switch below.
package adapters

import (
	"github.com/aep-hook/aep-hook/adapters/a2a"
	"github.com/aep-hook/aep-hook/adapters/acp"
	"github.com/aep-hook/aep-hook/adapters/agui"
	"github.com/aep-hook/aep-hook/adapters/kimiweb"
	"github.com/aep-hook/aep-hook/adapters/openclaw"
	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/adapters/openhands"
	"github.com/aep-hook/aep-hook/adapters/otlp"
	"github.com/aep-hook/aep-hook/adapters/pi"
	"github.com/aep-hook/aep-hook/mapping"
)

// Decode turns one JSON input line for a table on transport t into its
// moments, with the facts that transport's adapter would give them. A hook
// payload is one moment with the line as Raw and no facts. On an error the
// moments returned beside it (if any) are still good.
func Decode(t mapping.Transport, line []byte) ([]mapping.Moment, error) {
	switch t {
	case mapping.TransportACP:
		return acp.Decode(line)
	case mapping.TransportAGUI:
		return agui.Decode(line)
	case mapping.TransportOTLP:
		return otlp.Decode(line)
	case mapping.TransportOpenCode:
		return opencode.Decode(line)
	case mapping.TransportPi:
		return pi.Decode(line)
	case mapping.TransportKimiWeb:
		return kimiweb.Decode(line)
	case mapping.TransportOpenHands:
		return openhands.Decode(line)
	case mapping.TransportA2A:
		return a2a.Decode(line)
	case mapping.TransportOpenClaw:
		return openclaw.Decode(line)
	}
	return []mapping.Moment{{Raw: line}}, nil
}
