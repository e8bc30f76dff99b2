// Package kimiweb is the Kimi web channel: a bridge that follows the
// `kimi web` server (kap-server) over its WebSocket event stream
// (/api/v1/ws, subprotocol kimi-code.bearer.<token>) and hands each session
// event frame to the kimi-web table (TransportKimiWeb), and Decode for the
// frames' JSON form.
package kimiweb
