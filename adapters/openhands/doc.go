// Package openhands is the OpenHands agent-server bridge: it follows each
// conversation's events WebSocket (/sockets/events/{conversation_id}) as a
// read-only observer (the first-message auth frame is the only frame it
// ever writes) and hands each event to the openhands table
// (TransportOpenHands), and Decode for the events' JSON form.
package openhands
