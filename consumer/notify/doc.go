// Package notify is `aep-hook notify`: a consumer of a relay that gets
// every attention request an agent raises to the person who can answer
// it, once per route, wherever they are (the desktop, a phone through
// ntfy, a chat channel through a webhook), and records each delivery as
// attention.routed (AEP-0002 §7) in the request's session.
//
// # Reading
//
// The notifier subscribes to the relay's SSE stream for the attention
// lifecycle (requested, answered, resolved, timeout) under the
// configured attr-match filter, at the highest capture level any route
// shows. Each (re)connection opens the live stream first and then reads a
// snapshot of what the relay's buffers hold (from=all, live=0): the
// snapshot's requests and their resolutions are known before the live
// events held meanwhile are handled, so a request resolved before the
// notifier started is never sent, and nothing falls between the two.
// Requests of the configured kinds (default: permission and form) are
// routed; an answer, a resolution or a timeout ends one.
//
// # Delivering
//
// Each route delivers on its own, a few requests at a time: a route that
// hangs or fails delays no other. A failed attempt is recorded in the
// internal error log (never content) and retried with jittered
// exponential backoff, honouring Retry-After, until it succeeds, the
// request is resolved, or the attempts run out; answers that retrying
// cannot fix (a 4xx other than 408 and 429) stop at once. An optional
// delay holds the first delivery back (a request answered at the terminal
// meanwhile sends nothing) and an optional reminder sends a request still
// pending again. What was delivered where is kept in
// $AEP_HOME/notify/state.json, so a restart or a reconnection delivers
// nothing twice.
//
// What a notification shows is limited by its route's capture ceiling
// (redact.Downlevel): at metadata, the default, the agent, the tool, the
// session, the host and how long the request has waited, with the prompt
// as synthesized from structure; at redacted, also the request's text as
// the redaction pipeline left it. Full is not offered: push services and
// chat channels keep what they are sent.
//
// # Recording
//
// Each delivery is one attention.routed event, posted to the relay's
// POST /events under the notifier's own token: agent and source name the
// router (DefaultAgent unless configured), session, run and tenant are
// the request's, subject and cause are the request's id, and it carries
// no seq (AEP-0001 §5.2: a foreign emitter in the session). Data says to
// (the route's name) and via (its mechanism: ntfy, webhook, notify-send,
// osascript, toast). Records the relay has not yet taken are retried and
// kept in the state across restarts.
//
// # Answering
//
// With actions configured, an ntfy notification of a permission request
// that declares respond_via control carries answer buttons (Buttons): http
// actions to the notifier's own listener, each URL signed for its request
// and choice. A press sends control.attention.respond over the relay's
// WebSocket as the notifier's agent, so the held hook's attention.answered
// says via control, by that agent; a press for a request that has settled
// answers nothing and says so.
//
// # Credentials
//
// The configuration file holds the relay token, webhook URLs and ntfy
// tokens; it is refused when group or others may read it, and neither its
// values nor a route's URL path (a webhook's credential) appear in an
// error, the error log or a Route's description. The buttons' signing key
// lives in its own 0600 file, and a button's URL is never logged.
package notify
