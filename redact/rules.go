package redact

import (
	"strings"
	"sync"
)

// rule is one secret detector, as data (after gitleaks): a regular
// expression (RE2: linear time) that only runs in windows around a cheap
// keyword hit, or a linear scanner called at each hit. Its true- and
// false-positive samples, checked by TestRules, are in samples_test.go.
type rule struct {
	id string
	// keywords are lower-case literals, matched ignoring ASCII case unless
	// exact is set (then as written); the pattern runs only within
	// [hit-back, hit+fwd] of an occurrence, extended to the end of the
	// token there.
	keywords  []string
	exact     bool
	pattern   string
	back, fwd int
	// inner, when set, runs over each match of pattern, and its matches
	// (their groups) are what is redacted: every -p of one command line.
	inner string
	// groups lists the submatches to redact; the first that participated
	// is replaced. Empty means the whole match.
	groups []int
	// scan, instead of a pattern, finds what to redact around a keyword
	// hit at i (keyword length k) by a linear scan.
	scan func(s string, i, k int, r *compiledRule) []span
	// check, when set, vets the redacted text of a pattern match.
	check func(string) bool
	// near, when set, vets a keyword hit at i before its window opens: a
	// cheap look at the bytes after a short keyword ("SK", "MT") spares
	// compiling a pattern for every capitalized word.
	near func(s string, i int) bool
}

const (
	secretMark = "[REDACTED:secret]"
	piiMark    = "[REDACTED:pii]"
)

// ruleTable is every rule, in a fixed order: the generic forms below, the
// forms judged by their context (rules_context.go), the command-line forms
// (rules_cli.go), the provider tokens and provider-named values
// (providers.go).
// The generic and provider token tables are data the compiler lays out;
// the rest is built on first use, never at package initialisation, so a
// process that never redacts pays nothing. It points into those tables
// rather than copying them: a Pipeline's lazily compiled patterns sit
// beside a pointer to their rule, and a hook process that redacts once
// then touches a few kilobytes instead of two copies of every rule.
var ruleTable = lazy[[]*rule]{make: buildRuleTable}

// buildRuleTable makes ruleTable's value.
func buildRuleTable() []*rule {
	parts := [][]rule{genericRules(), contextRules(), cliRules(), providerTokenRules, providerNameRules}
	n := 0
	for _, part := range parts {
		n += len(part)
	}
	out := make([]*rule, 0, n)
	for _, part := range parts {
		for i := range part {
			out = append(out, &part[i])
		}
	}
	return out
}

// lazy is a value made on its first use, once: sync.OnceValue laid out as
// data. A package-level sync.OnceValue(...) is a call the package's
// initialisation makes (allocating) in every process, and any such call
// also stops the compiler from laying out later tables that copy another
// variable (a rule's keywords: credKeywords): those are then written at
// start-up, a fresh page fault each in a short hook process.
type lazy[T any] struct {
	once sync.Once
	make func() T
	v    T
}

// get returns the value, making it on the first call.
func (l *lazy[T]) get() T {
	l.once.Do(func() { l.v = l.make() })
	return l.v
}

// rules returns a copy of every rule, in ruleTable's order.
func rules() []rule {
	refs := ruleTable.get()
	out := make([]rule, len(refs))
	for i, r := range refs {
		out[i] = *r
	}
	return out
}

// defaultIndex is the keyword index of the default table, shared by every
// Pipeline. Building it cost a hook process that redacts more than the
// rest of its start, so it is data (kwtable.go, which TestDefaultKWTable
// holds to newKWIndex(rules()) and rewrites with -update).
func defaultIndex() *kwIndex { return &defaultKWTable }

// credKeywords start the names CredentialKey and classifyKey judge.
var credKeywords = []string{
	"pass", "pw", "secret", "token", "key", "auth", "cred", "cookie", "pat", "otp", "mfa",
	"access", "api", "session", "sig", "salt", "hmac", "private", "cert", "license",
	"bearer", "jwt", "login", "pin", "mnemonic", "seed", "onetime", "one_time", "one-time",
}

// genericRules are the shapes every credential takes whatever its
// provider: key blocks, JWTs, authorization headers, URL credentials and
// credential-named assignments and flags.
func genericRules() []rule { return genericRuleTable }

// genericRuleTable is genericRules' table, laid out as data by the
// compiler (a literal built per call cost every hook process that redacts).
var genericRuleTable = []rule{
	{
		id: "pem-block",
		// A private key block (public keys and certificates are not
		// secrets), whole, or truncated up to the end of its body, also
		// with JSON-escaped newlines.
		keywords: []string{"-----begin", "---- begin ssh2 encrypted"},
		pattern:  `-{4,5} ?BEGIN[A-Z0-9 _-]*PRIVATE KEY(?: BLOCK)? ?-{4,5}(?:[\s\S]*?-{4,5} ?END[A-Z0-9 _-]*-{4,5}|(?:[A-Za-z0-9+/=:,.\-\s]|\\[nrt])*)`,
		back:     1, fwd: 16384,
	},
	{
		id:       "jwt",
		keywords: []string{"eyj"},
		pattern:  `\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-/\\]{4,}\.[A-Za-z0-9_\-/\\]*={0,2}`,
		back:     1, fwd: 8192,
	},
	{
		id:       "jwt-base64",
		keywords: []string{"zxlk"},
		pattern:  `\bZXlK[A-Za-z0-9+/]{40,}={0,2}`,
		back:     1, fwd: 8192,
	},
	{
		id:       "bearer",
		keywords: []string{"bearer"},
		pattern:  `(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{8,}=*)`,
		back:     1, fwd: 32,
		groups: []int{1},
		check:  tokenLike,
	},
	{
		id:       "basic-auth",
		keywords: []string{"basic"},
		pattern:  `(?i)(?:authorization|proxy-authorization|extraheader)\\?["']?\s*[:=]\s*\\?["']?(?:authorization:\s*)?basic\s+([A-Za-z0-9+/]{4,}=*)`,
		back:     64, fwd: 32,
		groups: []int{1},
	},
	{
		id: "url-credentials",
		// The password of a URL's userinfo (scheme://user:PASSWORD@host),
		// or a token standing as the whole userinfo (https://TOKEN@host).
		keywords: []string{"://"},
		scan:     scanURLUserinfo,
	},
	{
		id: "credential-assignment",
		// key = value in every spelling assignAt reads: a name
		// classifyKey calls strong takes any real value, a weak one
		// only a random-looking value.
		keywords: credKeywords,
		scan:     scanCredAssign,
	},
	{
		id:       "credential-flag",
		keywords: credKeywords,
		scan:     scanCredFlag,
	},
	{
		id: "name-value-pair",
		// {name: DB_PASSWORD, value: x} (Kubernetes env entries, GitHub
		// Actions, NuGet's <add key="ClearTextPassword" value="x" />).
		keywords: []string{"value"},
		scan:     scanNameValue,
	},
	{
		id:       "netrc",
		keywords: []string{"password", "passwd"},
		scan:     scanNetrc,
	},
	{
		id:       "pgpass",
		keywords: []string{"pgpass", ":5432:", ":*:"},
		pattern:  `(?:^|[\s'"])[^:\s'"#]+:(?:\d{1,5}|\*):[^:\s'"]+:[^:\s'"]+:([^\s'"]+)`,
		back:     256, fwd: 512,
		groups: []int{1},
	},
	{
		id: "kubernetes-secret-data",
		// Every value under data: / stringData: of a kind: Secret.
		keywords: []string{"kind: secret", "kind: \"secret\"", `"kind":"secret"`, `"kind": "secret"`},
		scan:     scanK8sSecret,
		back:     1, fwd: 4096,
	},
}

// hasDigit reports whether s holds an ASCII digit.
func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// tokenLike accepts a bearer token: random-looking (a digit) or long.
func tokenLike(s string) bool { return hasDigit(s) || len(s) >= 32 }

// judge reports whether the value of an assignment to a key of class c is
// a credential: any real value of a strong key, a random-looking one of a
// weak key.
func judge(s string, a assignment, c keyClass) bool {
	if c == notCred || placeholder(s, a.key, a.value, a.quote) {
		return false
	}
	v := s[a.value.start:a.value.end]
	return c == strongCred || randomLike(v) && !slugLike(v)
}

func scanCredAssign(s string, i, k int, _ *compiledRule) []span {
	a, ok := assignAt(s, i, k)
	if ok && mnemonicKey(a.key) {
		// seed: 42 is a random seed; seed: followed by a dozen plain
		// words is a wallet's recovery phrase.
		le := lineEnd(s, a.value.start)
		if a.quote {
			le = a.value.end
		}
		if ws := phraseWords(s, a.value.start, le); ws != nil && mnemonicShape(s[ws[0].start:ws[0].end]) {
			return ws
		}
	}
	if !ok || cookieKey(a.key) || !judge(s, a, classifyKey(a.key)) {
		return nil
	}
	if !a.quote && phraseKey(a.key) {
		a.value = phraseValue(s, a.value)
	}
	return []span{a.value}
}

// mnemonicKey reports whether a name that is not a credential's by itself
// ("seed", "wallet_seed") holds a recovery phrase when its value is one.
func mnemonicKey(k string) bool {
	segs := nameSegments(k)
	return len(segs) > 0 && segs[len(segs)-1] == "seed"
}

// mnemonicShape reports whether plain lower-case words can be a BIP-39
// recovery phrase: 12 to 24 words in steps of three, each of 3 to 8
// letters, none of the short words prose is made of and the word list
// leaves out.
func mnemonicShape(v string) bool {
	ws := strings.Fields(v)
	if len(ws) < 12 || len(ws) > 24 || len(ws)%3 != 0 {
		return false
	}
	for _, w := range ws {
		if len(w) < 3 || len(w) > 8 || mnemonicAbsent.has(w) {
			return false
		}
	}
	return true
}

// mnemonicAbsent are common English words the BIP-39 list does not hold.
const mnemonicAbsent wordSet = "the and for with from than are was were has had its our your their " +
	"tests runs data dev"

// phraseKey reports whether a name holds a phrase, whose unquoted value
// runs to the end of its line (passphrase: amber falcon river).
func phraseKey(k string) bool {
	n := strings.ToLower(k)
	for _, w := range [...]string{"passphrase", "phrase", "mnemonic", "seed", "answer"} {
		if strings.HasSuffix(n, w) {
			return true
		}
	}
	return false
}

// phraseValue extends an unquoted value to the end of its line when the
// words after it are plain words (no other assignment, no separator, no
// comment).
func phraseValue(s string, v span) span {
	le := lineEnd(s, v.end)
	rest := s[v.end:le]
	if strings.ContainsAny(rest, "=:;,\"'&|#{}[]<>()`\\") {
		return v
	}
	end := le
	for end > v.end && (s[end-1] == ' ' || s[end-1] == '\t') {
		end--
	}
	return span{v.start, end}
}

// scanURLUserinfo reads the authority after a "://" hit: the userinfo is
// what comes before its last '@' (a password may hold '@' or '#', as
// people write them), and its password, or the whole userinfo when it is
// one generated token, is the secret.
func scanURLUserinfo(s string, i, k int, _ *compiledRule) []span {
	if i == 0 || !isAlnum(s[i-1]) {
		return nil // no scheme
	}
	j := i + k
	at, e := -1, j
	for ; e < len(s) && e-j < 512; e++ {
		c := s[e]
		if c == '@' {
			at = e
			continue
		}
		if isSpace(c) || c == '/' || c == '?' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c == '[' && e == j {
			break
		}
	}
	if at <= j {
		return nil
	}
	ui := s[j:at]
	if c := strings.IndexByte(ui, ':'); c >= 0 {
		if c+1 == len(ui) {
			return nil
		}
		return []span{{j + c + 1, at}}
	}
	if len(ui) >= 16 && randomLike(ui) {
		return []span{{j, at}}
	}
	return nil
}

// cookieKey reports whether a name is a cookie header or map, whose value
// holds name=value pairs the cookie rule judges one by one.
func cookieKey(k string) bool {
	if len(k) < 6 || len(k) > 10 {
		return false
	}
	n := strings.ToLower(squeeze(k, "-_"))
	return n == "cookie" || n == "cookies" || n == "setcookie"
}

// flagPass are endings that make a flag a password even where they would
// over-match as a key name: keytool -storepass, openssl -passin.
var flagPass = [...]string{"pass", "passin", "passout", "pwd", "pw", "passwd"}

func scanCredFlag(s string, i, k int, _ *compiledRule) []span {
	a, ok := flagAt(s, i, k)
	if !ok || singleDash(s, i, k) && !shortPassFlag(a.key) {
		return nil
	}
	c := classifyKey(a.key)
	norm := strings.ToLower(squeeze(a.key, "-_"))
	for _, suf := range flagPass {
		if strings.HasSuffix(norm, suf) {
			c = strongCred
		}
	}
	if !judge(s, a, c) {
		return nil
	}
	return []span{a.value}
}

// singleDash reports whether the flag holding the keyword at i is written
// with one dash (-storepass, or -pPASS: mysql's -p with its value).
func singleDash(s string, i, k int) bool {
	ks, _ := keyAround(s, i, k)
	return ks+1 < len(s) && s[ks] == '-' && s[ks+1] != '-'
}

// shortPassFlags are the one-dash long flags that take a password
// (keytool, openssl, influx): any other one-dash word holding "pass" is a
// short flag with its value attached (mysql -pPASS, 7z -ppassword), the
// command-line rules' to judge, and the next word is not its value.
const shortPassFlags wordSet = "pass passin passout password passwd pw pwd storepass keypass srcstorepass " +
	"deststorepass srckeypass destkeypass new-password"

func shortPassFlag(key string) bool { return shortPassFlags.has(strings.ToLower(key)) }

// scanNameValue redacts the value of a {name: X, value: V} pair when X
// names a credential: the "value" key at i, the name within the 200 bytes
// before it.
func scanNameValue(s string, i, k int, _ *compiledRule) []span {
	a, ok := assignAt(s, i, k)
	if !ok || !strings.EqualFold(a.key, "value") {
		return nil
	}
	from := max(0, i-200)
	before := s[from:i]
	j := max(strings.LastIndex(before, "name"), strings.LastIndex(before, "key"))
	if j < 0 {
		return nil
	}
	kw := 4
	if strings.HasPrefix(before[j:], "key") {
		kw = 3
	}
	n, ok := assignAt(s, from+j, kw)
	if !ok || n.value.end > i {
		return nil
	}
	if !judge(s, a, classifyKey(s[n.value.start:n.value.end])) {
		return nil
	}
	return []span{a.value}
}

// scanNetrc reads a .netrc "password VALUE" token pair: the keyword as a
// whole word, a machine or default entry and a login before it.
func scanNetrc(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && !isSpace(s[i-1]) || i+k >= len(s) || (s[i+k] != ' ' && s[i+k] != '\t') {
		return nil
	}
	before := strings.ToLower(s[max(0, i-512):i])
	m := max(strings.LastIndex(before, "machine "), strings.LastIndex(before, "default "))
	if m < 0 || !strings.Contains(before[m:], "login ") {
		return nil
	}
	v := skipBlanks(s, i+k)
	sp, _, ok := parseValue(s, v)
	if !ok || placeholder(s, "password", sp, false) {
		return nil
	}
	return []span{sp}
}

// scanK8sSecret redacts every value of the data: and stringData: maps of a
// Kubernetes Secret manifest (YAML or JSON) around the keyword (kubectl
// prints data before kind).
func scanK8sSecret(s string, i, k int, r *compiledRule) []span {
	from, end := max(0, i-r.fwd), min(len(s), i+k+r.fwd)
	var out []span
	for _, blk := range [...]string{"\ndata:", `"data":`, "\nstringData:", `"stringData":`} {
		j := strings.Index(s[from:end], blk)
		if j < 0 {
			continue
		}
		j += from + len(blk)
		if v := skipBlanks(s, j); v < end && s[v] == '{' {
			out = append(out, jsonMapValues(s, v+1, end)...)
			continue
		}
		out = append(out, yamlMapValues(s, j, end)...)
	}
	return out
}

// yamlMapValues returns the values of the "key: value" lines of the
// indented block that starts on the line after j.
func yamlMapValues(s string, j, end int) []span {
	nl := strings.IndexByte(s[j:end], '\n')
	if nl < 0 {
		return nil
	}
	var out []span
	indent := -1
	for ls := j + nl + 1; ls < end; {
		le := end
		if e := strings.IndexByte(s[ls:end], '\n'); e >= 0 {
			le = ls + e
		}
		d := skipBlanks(s, ls) - ls
		if d == 0 || ls+d >= le || (indent >= 0 && d < indent) {
			break
		}
		if indent < 0 {
			indent = d
		}
		if c := strings.IndexByte(s[ls+d:le], ':'); d == indent && c > 0 {
			if v := skipBlanks(s, ls+d+c+1); v < le {
				if sp, _, ok := parseValue(s, v); ok {
					out = append(out, sp)
				}
			}
		}
		ls = le + 1
	}
	return out
}

// jsonMapValues returns the string values of a flat JSON object starting
// after its '{' at j.
func jsonMapValues(s string, j, end int) []span {
	var out []span
	for j < end && s[j] != '}' {
		c := strings.IndexByte(s[j:end], ':')
		if c < 0 {
			break
		}
		v := skipBlanks(s, j+c+1)
		sp, _, ok := parseValue(s, v)
		if !ok {
			break
		}
		out = append(out, sp)
		j = sp.end + 1
		for j < end && s[j] != ',' && s[j] != '}' {
			j++
		}
		if j < end && s[j] == ',' {
			j++
		}
	}
	return out
}
