// Package console is the fleet console the relay serves at /: one page,
// embedded in the binary (plain hand-written HTML, CSS and JavaScript, no
// build step and nothing fetched from elsewhere), that watches every
// agent and session the relay serves and answers the attention requests
// waiting for a human.
//
// The page is a consumer of the relay like any other. Its first load is
// one HTTP response, GET /stream with live=0 (everything the relay holds
// under the page's attr-match filter, then the end), folded in and
// rendered once: a browser hands each WebSocket frame to the page on its
// own, and one frame per event made a large fleet's first render take
// seconds. Then it subscribes on the relay's WebSocket binding (/socket)
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
//   - The embedded assets, served with a content security policy that
//     allows nothing but this origin.
//
// The page dispatches DOM events other scripts can build on: on window,
// "aep:attention-pending" when a request starts waiting (detail: the
// request) and "aep:attention-settled" when it stops; window.aepConsole
// lists the pending requests and answers one (see assets/console.js).
package console
