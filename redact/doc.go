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
// Secret detection follows gitleaks' shape with the project's own curated
// table (rules.go): each rule is data (keywords, an RE2 pattern or a linear
// scanner, true- and false-positive samples checked by TestRules), and one
// pass over the input finds every keyword case-insensitively, so a rule's
// pattern runs only in bounded windows around its hits. A pipeline builds
// its keyword index on its first call and compiles each pattern the first
// time its keyword occurs; the default metadata path compiles nothing.
//
// Why not gitleaks as a dependency: its detector compiles its whole default
// rule set (some 200 regexps, several with large bounded repetitions) when
// it is built and pulls in viper/zerolog-sized dependencies, while a hook
// process lives for a few milliseconds. gitleaks could not be fetched in
// this environment, so that side is reasoned, not measured; compiling 200
// such regexps costs well over the 2 ms first-call budget on its own.
// Measured here (AMD EPYC, go1.26): a fresh pipeline's
// first redaction of a typical hook payload, the rules it needs compiled,
// takes about 0.07 ms (BenchmarkFirstCall); the whole pipeline over a
// 1 MB mixed agent corpus takes about 37 ms, 0.55x one RE2 pass of a single
// e-mail pattern over the same bytes (67 ms). The table covers the token
// shapes of gitleaks' default rules that matter to coding agents (GitHub,
// GitLab, Slack, OpenAI/Anthropic sk- keys, Google, AWS, Stripe, npm, PyPI,
// Hugging Face, SendGrid, DigitalOcean, Vault, Shopify, Databricks, ...)
// plus credentials in URLs, connection strings, flags, headers and every
// credential-named key spelling ([CredentialKey]).
//
// Worst cases stay linear: windows around hits are merged before a pattern
// runs, token extension is bounded, scanners never revisit bytes, and all
// patterns are RE2. 1 MB of one byte costs ~3 ms, 1 MB of base64 ~50 ms,
// 1 MB of "token=a " ~32 ms, 1 MB of unterminated PEM headers ~190 ms.
//
// # Errors
//
// Errors from this package never quote payload content; configuration
// values are quoted clipped.
package redact
