// Package console is the fleet console the relay serves at /: one page,
// embedded in the binary (plain hand-written HTML, CSS and JavaScript, no
// build step and nothing fetched from elsewhere), that watches every
// agent and session the relay serves and answers the attention requests
// waiting for a human.
//
// The page is a consumer of the relay like any other. It reads the record
// over the relay's own WebSocket binding (/socket): one attr-match
// subscription replayed from everything the relay holds, then live, and
// after a dropped connection a new one resumed from the last position it
// saw of every session. It answers a pending request by sending
// control.attention.respond on the same connection, with the authority of
// the signed-in token: the relay decides, the page only offers what the
// token allows.
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
//   - The embedded assets, served with a content security policy that
//     allows nothing but this origin.
//
// The page dispatches DOM events other scripts can build on: on window,
// "aep:attention-pending" when a request starts waiting (detail: the
// request) and "aep:attention-settled" when it stops; window.aepConsole
// lists the pending requests and answers one (see assets/console.js).
package console
