// Package opencode is the OpenCode and Kilo Code transport, both of its
// channels: the stream bridge behind `aep-hook follow opencode|kilo`,
// which follows the server's SSE event stream (catching up over its REST
// API after a drop) and hands each event to the server's SSE table, and
// the forwarder plugin shipped in the binary (`aep-hook plugin`), which
// runs inside the server and writes its events to `aep-hook forward`;
// Decode turns either channel's JSON moment form into moments.
package opencode
