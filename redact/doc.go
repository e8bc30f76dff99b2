// Package redact enforces AEP capture ceilings: the per-field capture levels
// of every registered payload type (AEP-0002 §5), ceilings with per-category
// overrides, down-leveling of events from elsewhere (AEP-0001 §8.2), the
// metadata synthesis of the starred fields, digests (AEP-0003 §9.3) and the
// AEP-0003 §9.4 text redaction pipeline with its structured-value walker.
//
// The package knows no vendor. The emitter calls [Gate] for every event it
// builds, which is the one place content can leave the process.
//
// # Capture posture
//
// [ParsePolicy] reads --capture / AEP_CAPTURE and --capture-override /
// AEP_CAPTURE_OVERRIDES. The default override attention.*=redacted only
// raises: it applies when the global ceiling is metadata, so an explicit
// "none" with no explicit overrides is none everywhere, and "full" stays full
// for attention.*. Explicit overrides apply as given, also above the global
// ceiling. An invalid value yields an error and the fail-closed metadata
// posture without overrides.
//
// # The rules
//
// Secret detection follows gitleaks' shape: rules are data (rules.go, the
// forms judged by their context in rules_context.go and prose.go, the
// command-line forms in rules_cli.go, the provider tokens in providers.go
// and provider_names.go), each with its own true- and false-positive
// samples checked by TestRules, and one detector runs them. A single pass
// over the input finds every keyword case-insensitively; only the rules
// hit run, a pattern (RE2: linear time) in bounded windows around its
// hits, a scanner (assign.go: KEY = VALUE in every common spelling, flags,
// .netrc, name/value pairs, Kubernetes Secrets, URL userinfo, cookies) at
// the hit itself. A short keyword ("SK", "MT") looks at the bytes after
// it before its window opens. The table and its keyword index are built on
// first use and each pattern compiles the first time its keyword occurs,
// so the metadata path compiles nothing and a hook's first redaction
// compiles only the few patterns its payload touches.
//
// Names are judged, not listed: [CredentialKey] and its weaker sibling
// accept every spelling of a credential-bearing name (SECRET_KEY_BASE,
// MY_SERVICE_CRED, DB_PWD, GITHUB_PAT, refreshToken, aws_secret_access_key)
// and demote names that describe one (token_count, secret_name,
// password_file, session_id); a weak name ("cache_key", "auth") takes a
// value only when it looks random, and no name takes a placeholder
// (REPLACE_ME, your-api-key-here, a variable, a template, a type).
//
// A bare value is judged by its shape and by the words and commands around
// it: a prose noun and its verb ("the root password is X": a password takes
// anything but an English word, a key only what looks generated, a PIN its
// digits), a noun followed at once by a generated token ("here's my key
// X"), a value stated before its noun, a token pasted alone after a
// question or a few words ending in a colon, or as a whole text, the output
// of a command that prints a secret or reads a secret file, what a command
// writes into one, a recovery phrase's dozen words after seed. Hex strings,
// UUIDs, ULIDs, digests, integrity strings, paths, versions, base64 media,
// slugs and identifiers of words and numbers are not tokens by shape alone.
//
// Every scan also runs on decoded views of the input: lines joined at
// backslash continuations, URL percent escapes decoded, string literals
// that code concatenates joined; base64 and hex runs (also wrapped over
// lines, also hex dumps and nested encodings) that decode to text holding
// a secret are removed whole; and a secret that ends its line is followed
// onto the next when the line wraps it (a terminal's width, a heredoc's
// next line).
//
// Identifiers are metadata, kept at every ceiling below full: [Name] runs
// the token rules on them (the gate's verbatim strings, the emitter's
// subjects, the state store's keys and values), replacing the token and
// keeping the name's structure; an ordinary name returns at once without
// building the rules.
//
// The home rule replaces the configured home directory only, exactly, as
// a path's whole prefix at a path boundary: a redacted record never states
// a different path.
//
// Breadth is measured, not claimed: gitleaks v8.30.1 is a test-only
// dependency (never linked into the binary, TestGitleaksNotLinked), and
// TestGitleaksDifferential asserts that every secret its default rules find
// in the project's corpus (testdata/corpus, over 800 cases, a fifth of
// them negatives that must stay untouched) is also removed here. Linking gitleaks instead
// would compile its 222 default rules in every hook process.
//
// Worst cases stay linear: windows around hits are merged before a pattern
// runs, token extension is bounded, a scanner looks a bounded way along
// the line around its hit (a megabyte without a line break costs each hit
// a bounded look), each byte is decoded at most once per encoding level
// (three at most), and all patterns are RE2. `make bench` prints the pipeline's cost per MB beside
// one RE2 pass of the same bytes.
//
// # Errors
//
// Errors from this package never quote payload content; configuration
// values are quoted clipped.
package redact
