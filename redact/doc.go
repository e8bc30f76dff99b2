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
// command-line forms in rules_cli.go, the provider tokens in providers.go
// and provider_names.go), each with its own true- and false-positive
// samples checked by TestRules, and one detector runs them. A single pass
// over the input finds every keyword case-insensitively; only the rules
// hit run, a pattern (RE2: linear time) in bounded windows around its
// hits, a scanner (assign.go: KEY = VALUE in every common spelling, flags,
// .netrc, name/value pairs, Kubernetes Secrets) at the hit itself. The
// table and its keyword index are built on first use and each pattern
// compiles the first time its keyword occurs, so the metadata path
// compiles nothing and a hook's first redaction compiles only the few
// patterns its payload touches.
//
// Names are judged, not listed: [CredentialKey] and its weaker sibling
// accept every spelling of a credential-bearing name (SECRET_KEY_BASE,
// MY_SERVICE_CRED, DB_PWD, GITHUB_PAT, refreshToken, aws_secret_access_key)
// and demote names that describe one (token_count, secret_name,
// password_file); a weak name ("cache_key", "auth") takes a value only when
// it looks random. Every scan also runs on two decoded views of the input,
// lines joined at backslash continuations and URL percent escapes decoded,
// and a base64 run that decodes to text holding a secret (or to a
// user:password pair) is removed whole.
//
// Breadth is measured, not claimed: gitleaks v8.30.1 is a test-only
// dependency (never linked into the binary, TestGitleaksNotLinked), and
// TestGitleaksDifferential asserts that every secret its default rules find
// in the project's corpus (testdata/corpus, over 500 cases with negatives
// that must stay untouched) is also removed here. Linking gitleaks instead
// would compile its 222 default rules in every hook process.
//
// Worst cases stay linear: windows around hits are merged before a pattern
// runs, token extension is bounded, scanners never revisit bytes, each byte
// is base64-decoded at most once, and all patterns are RE2. `make bench`
// prints the pipeline's cost per MB beside one RE2 pass of the same bytes.
//
// # Errors
//
// Errors from this package never quote payload content; configuration
// values are quoted clipped.
package redact
