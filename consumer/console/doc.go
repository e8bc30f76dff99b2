// Package console is the fleet console the relay serves at /: one page,
// embedded in the binary (plain hand-written HTML, CSS and JavaScript, no
// build step and nothing fetched from elsewhere), that watches every
// agent and session the relay serves and answers the attention requests
// waiting for a human.
//
// The page is a consumer of the relay like any other. Its first load is
// the fleet summary this package serves at /console/fleet: what a GET
// /stream from everything would deliver to the same token under the same
// filter (the relay's own Snapshot, so its scopes, tenant and capture
// ceiling apply unchanged), cut down to each session's counts, its
// newest position, and the few events its fleet state depends on (its
// start and end, open runs, the last finished one, fatal errors, the
// requests still pending and their answers). The page folds those with
// the same code that folds the stream and renders once; a session's
// whole record is fetched (GET /stream from its start, live=0) when it
// is opened. Parsing a large fleet's every event in the page made its
// first render take seconds. Then it subscribes on the relay's WebSocket
// binding (/socket)
// resumed from the last position of every session, live from there, and
// resumes the same way after a dropped connection. It answers a pending
// request by sending control.attention.respond on that connection, with
// the authority of the signed-in token: the relay decides, the page only
// offers what the token allows. When asked to (a button, never on load)
// it shows permission and form requests that start waiting as browser
// notifications and, when its token may emit under its name, records each
// as attention.routed in the request's session.
//
// What this package owns is the server side of that page:
//
//   - Sign-in: a browser opens /?access_token=TOKEN once; the token is
//     moved into the relay's HttpOnly, SameSite=Strict cookie and the
//     browser is sent to the same page without it, so no page URL carries
//     a token after that. /signout clears the cookie.
//   - What the page is told about its token: identity, capture ceiling,
//     whether it may answer (a control scope covering
//     control.attention.respond on an authenticated connection), and the
//     widest filter its scopes allow. The page shows what the relay
//     delivers under that token and offers answer controls only when the
//     token may send them; the relay enforces both regardless.
//   - The fleet summary (/console/fleet, GET with GET /stream's filter
//     and capture query, refused as the stream refuses them).
//   - The embedded assets, served with a content security policy that
//     allows nothing but this origin.
//
// The page dispatches DOM events other scripts can build on: on window,
// "aep:attention-pending" when a request starts waiting (detail: the
// request) and "aep:attention-settled" when it stops; window.aepConsole
// lists the pending requests and answers one (see assets/console.js).
package console
