// Package openclaw follows an OpenClaw Gateway (`openclaw gateway`, wire
// protocol v4) for the AEP-0002 Annex A.16 table (mapping.OpenClaw).
//
// Bridge is a read-only gateway client (a follow.Source on the shared
// WebSocket client, adapters/ws): it answers the gateway's
// connect.challenge with a connect request for role operator and the one
// scope operator.read (the gateway's shared token as auth; on loopback a
// backend client needs no device identity), subscribes to the session
// index, and hands every broadcast event frame over as one moment. The
// only frames it writes are the connect and the subscription: it never
// sends a message, answers an approval or aborts a run.
//
// Decode turns the JSON moment form (`aep-hook map openclaw`, the pins:
// one event frame per line) into the moment the bridge would hand over.
package openclaw
