package redact

import (
	"math"
	"strings"
)

// This file reads assignments by hand, in linear time: KEY = VALUE in the
// spellings of shells, dotenv, INI, YAML, JSON (also JSON-escaped), XML,
// Makefiles, Go, Python, PHP, Ruby and Java, and command-line flags
// --KEY VALUE. A scan rule finds a keyword, these functions find the name
// around it and the value after it, and the rule judges both.

// keyByte reports whether c can be part of a name: an assignment's key, a
// user or a path segment.
func keyByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' }

// keyAround returns the key name around the keyword at s[i:i+k].
func keyAround(s string, i, k int) (start, end int) {
	start, end = i, i+k
	for start > 0 && i-start < 64 && keyByte(s[start-1]) {
		start--
	}
	for end < len(s) && end-i < 64 && keyByte(s[end]) {
		end++
	}
	return start, end
}

// skipBack returns the position of the last non-blank byte at or before j
// (0 when there is none).
func skipBack(s string, j int) int {
	for j > 0 && (s[j] == ' ' || s[j] == '\t') {
		j--
	}
	return j
}

func skipBlanks(s string, j int) int {
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	return j
}

// assignment is what assignAt found: the key and the value's range.
type assignment struct {
	key   string
	value span
	quote bool // the value was quoted
}

// assignAt reads an assignment whose key holds the keyword at s[i:i+k]. The
// key may be quoted (also JSON-escaped), an XML element name (<key>value),
// or followed by one type word (var key string = "v"). The operators are
// =, :, =>, :=, ::=, :::=, ?=, .=, += and, between a quoted key and a
// quoted value, a comma (setProperty("KEY", "v")). A value missing on the
// key's line is read from the next line when that line is a lone value
// (KEY=\n  value, and YAML's key: |). ok is false when no value follows.
func assignAt(s string, i, k int) (a assignment, ok bool) {
	ks, ke := keyAround(s, i, k)
	if ks > 0 && s[ks-1] == '$' {
		ks-- // PHP $key, shell ${key}
	}
	a.key = strings.TrimLeft(s[ks:ke], "$")
	quoted := ks > 0 && (s[ks-1] == '"' || s[ks-1] == '\'' || s[ks-1] == '`')
	xml := ks > 0 && s[ks-1] == '<'
	j := ke
	if quoted {
		for j < len(s) && s[j] == '\\' { // JSON-escaped, possibly twice
			j++
		}
		if j < len(s) && (s[j] == '"' || s[j] == '\'' || s[j] == '`') {
			j++
		}
	}
	j = skipBlanks(s, j)
	if xml {
		if j >= len(s) || s[j] != '>' {
			return a, false
		}
		return a, xmlValue(s, j+1, s[ks:ke], &a)
	}
	op, next := operatorAt(s, j)
	if op == "" && j > ke && j < len(s) && isAlpha(s[j]) { // one type word: var key string = v
		w := j
		for w < len(s) && w-j < 24 && (isAlnum(s[w]) || s[w] == '_' || s[w] == '.' || s[w] == '[' || s[w] == ']') {
			w++
		}
		if w > j && w < len(s) && (s[w] == ' ' || s[w] == '\t') {
			op, next = operatorAt(s, skipBlanks(s, w))
		}
	}
	if op == ":" && ks > 0 && s[ks-1] == '/' {
		return a, false // ghcr.io/acme/api:1.4.2, a path's last segment and its tag or port
	}
	if quoted && j == ke && op == ":" && next < len(s) && s[next] == s[ks-1] {
		return a, false // "Password:": a prompt's words in quotes, not a key and its value
	}
	switch op {
	case "":
		return a, false
	case ",": // setProperty("KEY", "v"): a quoted first argument
		if !quoted || ks < 2 || s[skipBack(s, ks-2)] != '(' {
			return a, false
		}
	}
	v := skipBlanks(s, next)
	if op == ":" { // a type annotation: name: string = "v"
		w := v
		for w < len(s) && (isAlnum(s[w]) || s[w] == '_' || s[w] == '[' || s[w] == ']' || s[w] == '|' || s[w] == '<' || s[w] == '>') {
			w++
		}
		// The '=' of an annotation has a value after it on its line; one
		// that ends the line is a base64 value's padding (token: QUJD=).
		if e := skipBlanks(s, w); w > v && e < len(s) && s[e] == '=' && e+1 < len(s) && s[e+1] != '=' && s[e+1] != '>' && !atLineEnd(s, e+1) {
			v = skipBlanks(s, e+1)
		}
	}
	if op == "," && (v >= len(s) || (s[v] != '"' && s[v] != '\'' && !(s[v] == '\\' && v+1 < len(s) && s[v+1] == '"'))) {
		return a, false
	}
	if op == ":" && v < len(s) && s[v] == '!' {
		// A YAML tag (!vault |, !!binary): the value is what follows it.
		w := v
		for w < len(s) && !isSpace(s[w]) {
			w++
		}
		if strings.HasPrefix(s[v:w], "!vault") {
			return a, false // Ansible Vault ciphertext: encrypted, not a secret in the clear
		}
		if e := skipBlanks(s, w); w < len(s) && e > w && !atLineEnd(s, w) {
			v = e // password: !!str Hunt3r2x
		}
	}
	if v < len(s) && (s[v] == '|' || s[v] == '>') && op == ":" { // YAML block scalar
		e := v + 1
		for e < len(s) && (s[e] == '-' || s[e] == '+' || s[e] == ' ' || s[e] == '\t') {
			e++
		}
		if e == len(s) || s[e] == '\n' || s[e] == '\r' {
			return a, nextLineValue(s, e, &a)
		}
	}
	if atLineEnd(s, v) {
		return a, nextLineValue(s, v, &a)
	}
	sp, q, ok := parseValue(s, v)
	a.value, a.quote = sp, q
	return a, ok
}

// operatorAt returns the assignment operator at s[j:] and where the value
// starts, or "" when there is none (also for ==, ://, ::).
func operatorAt(s string, j int) (op string, next int) {
	if j >= len(s) {
		return "", j
	}
	rest := s[j:]
	for _, o := range [...]string{":::=", "::=", ":=", "=>", "?=", ".=", "+="} {
		if strings.HasPrefix(rest, o) {
			return o, j + len(o)
		}
	}
	switch rest[0] {
	case '=':
		if len(rest) > 1 && rest[1] == '=' {
			return "", j
		}
		return "=", j + 1
	case ':':
		if len(rest) > 1 && (rest[1] == '/' || rest[1] == ':') {
			return "", j
		}
		return ":", j + 1
	case ',':
		return ",", j + 1
	}
	return "", j
}

// atLineEnd reports whether only blanks (and a line continuation) stand
// between j and the end of its line.
func atLineEnd(s string, j int) bool {
	j = skipBlanks(s, j)
	if j < len(s) && s[j] == '\\' && j+1 < len(s) && (s[j+1] == '\n' || s[j+1] == '\r') {
		return true
	}
	return j >= len(s) || s[j] == '\n' || s[j] == '\r'
}

// nextLineValue reads a value at the start of the line after j: blanks,
// then one quoted string or bare token ending at a blank or the line's end.
// A line that is itself an assignment, a list item, a comment or a bracket
// is not a value.
func nextLineValue(s string, j int, a *assignment) bool {
	j = skipBlanks(s, j)
	if j < len(s) && s[j] == '\\' {
		j++
	}
	if j < len(s) && s[j] == '\r' {
		j++
	}
	if j >= len(s) || s[j] != '\n' {
		return false
	}
	v := skipBlanks(s, j+1)
	if v >= len(s) {
		return false
	}
	switch s[v] {
	case '-', '#', '{', '}', '[', ']', '<', '\n', '\r', '/', '*':
		return false
	}
	sp, q, ok := parseValue(s, v)
	if !ok {
		return false
	}
	// The token must end its line: "next: 1" or "key=v" on the next line
	// is an assignment of its own, "curl -s ..." a command.
	if e := skipBlanks(s, sp.end+boolInt(q)); e < lineBody(s, v, lineEnd(s, v)) && s[e] != '\\' && s[e] != '#' {
		return false // a card's trailing "(description)" is not on the line
	}
	if t := s[sp.start:sp.end]; !q && (strings.HasSuffix(t, ":") || strings.Contains(t, "=")) {
		return false
	}
	a.value, a.quote = sp, q
	return true
}

// xmlValue reads <key>value</key>: the text up to the element's closing
// tag, trimmed, possibly on the following lines. Text that another tag or
// nothing closes is not a value (<token> in prose is a placeholder).
func xmlValue(s string, j int, name string, a *assignment) bool {
	e := j
	for e < len(s) && e-j < 4096 && s[e] != '<' {
		e++
	}
	if e >= len(s) || !strings.HasPrefix(s[e:], "</"+name) {
		return false
	}
	st, en := j, e
	for st < en && isSpace(s[st]) {
		st++
	}
	for en > st && isSpace(s[en-1]) {
		en--
	}
	if en == st {
		return false
	}
	a.value, a.quote = span{st, en}, true
	return true
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// flagAt reads a command-line flag holding the keyword at s[i:i+k]:
// --KEY VALUE, --KEY=VALUE, -KEY VALUE, also quoted ("--token" x). A value
// starting with '-' is another flag, not a value.
func flagAt(s string, i, k int) (a assignment, ok bool) {
	ks, ke := keyAround(s, i, k)
	if s[ks] != '-' || (ks > 0 && !strings.ContainsRune(" \t\n\"'", rune(s[ks-1]))) {
		return a, false
	}
	a.key = strings.TrimLeft(s[ks:ke], "-")
	j := ke
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	switch {
	case j < len(s) && s[j] == '=':
		j++
	case j < len(s) && (s[j] == ' ' || s[j] == '\t'):
		j = skipBlanks(s, j)
	default:
		return a, false
	}
	if j < len(s) && s[j] == '-' {
		return a, false
	}
	a.value, a.quote, ok = parseValue(s, j)
	return a, ok
}

// parseValue reads a value starting at i: a double-quoted string (also
// JSON-escaped as \"...\"), a single-quoted or backquoted string, or a bare
// token. An authentication scheme word (Bearer, Basic, token) is skipped to
// the credential after it. quoted reports a quoted value.
func parseValue(s string, i int) (sp span, quoted, ok bool) {
	n := len(s)
	if i >= n {
		return span{}, false, false
	}
	var st, en int
	bs := 0 // a JSON-escaped quote: \" (or \\\" inside a string in a string)
	for i+bs < n && s[i+bs] == '\\' {
		bs++
	}
	switch {
	case bs > 0 && i+bs < n && s[i+bs] == '"':
		st = i + bs + 1
		en = st
		for en < n && s[en] != '\n' && s[en] != '\r' && s[en] != '\\' && s[en] != '"' {
			en++
		}
		quoted = true
	case s[i] == '"':
		st = i + 1
		en = st
		for en < n && s[en] != '"' && s[en] != '\n' && s[en] != '\r' {
			if s[en] == '\\' && en+1 < n && s[en+1] != '\n' {
				en++
			}
			en++
		}
		en = min(en, n)
		quoted = true
	case s[i] == '\'' || s[i] == '`':
		q := s[i]
		st = i + 1
		en = st
		for en < n && s[en] != q && s[en] != '\n' && s[en] != '\r' {
			en++
		}
		quoted = true
	default:
		st = i
		en = bareEnd(s, i)
	}
	if quoted && bs == 0 && en < n && (s[en] == '\n' || s[en] == '\r') {
		en = spanLines(s, en, s[i])
	}
	if en == st {
		return span{}, quoted, false
	}
	switch strings.ToLower(s[st:en]) {
	case "bearer", "basic", "token", "digest", "negotiate", "ssws":
		j := skipBlanks(s, en)
		if j == en || j >= n {
			return span{}, quoted, false
		}
		e := bareEnd(s, j)
		if quoted && e > en {
			e = min(e, closeQuote(s, j, s[i]))
		}
		return span{j, e}, false, e > j
	}
	return span{st, en}, quoted, true
}

// spanLines continues a quoted value that a line break interrupts at en
// (a shell string, a heredoc splitting a password): to its closing quote q
// when that closes within a few lines and ends the value; else the value
// ends at the line break.
func spanLines(s string, en int, q byte) int {
	lim := min(len(s), en+256)
	k := strings.IndexByte(s[en:lim], q)
	if k < 0 || strings.Count(s[en:en+k], "\n") > 3 {
		return en
	}
	c := en + k
	if c+1 < len(s) && !isSpace(s[c+1]) && strings.IndexByte(";,)]}", s[c+1]) < 0 {
		return en
	}
	return c
}

// closeQuote returns the position of the quote q closing a string that
// continues at j, or len(s).
func closeQuote(s string, j int, q byte) int {
	if q == '\\' {
		q = '"'
	}
	if k := strings.IndexByte(s[j:], q); k >= 0 {
		return j + k
	}
	return len(s)
}

// hasAlnum reports whether s holds a letter or digit (any non-ASCII byte
// counts): a value of ASCII punctuation alone ("/", "***", "-") is a
// placeholder, not a credential.
func hasAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		if isAlnum(s[i]) || s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// bareEnd returns the end of an unquoted value starting at i.
func bareEnd(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '"', '\'', ',', ';', '&', '{', '}', '[', ']', '(', ')', '<', '>', '\\', '`':
			return i
		}
		i++
	}
	return i
}

// typeWords are values that name a type, not hold a value ("token:
// string" in a TypeScript interface).
const typeWords wordSet = "string str number int integer bool boolean bytes any object unknown " +
	"void char float double long optional required true false null none " +
	"nil undefined redacted secret password token hidden masked " +
	"int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 float32 float64 complex64 complex128 " +
	"yes no on off enabled disabled read write inherit"

// codeWords are the keywords that open an expression in common languages:
// after an assignment operator and before another word they say the value
// is computed, not written down.
const codeWords wordSet = "await new yield typeof async lambda require import function func fn " +
	"this self super not"

// placeholder reports whether the value v of an assignment to key is a
// stand-in rather than a credential: punctuation alone, a boolean or type
// word, the key's own name, a variable or template reference ($NAME,
// ${NAME}, {{ x }}, %NAME%, <your-token>), an already redacted value, or,
// unquoted, a dotted code reference without digits (os.environ,
// config.password) or a call (getpass()).
func placeholder(s string, key string, sp span, quoted bool) bool {
	v := s[sp.start:sp.end]
	if !hasAlnum(v) || strings.HasPrefix(v, "[REDACTED") || typeWords.has(strings.ToLower(v)) || placeholderWord(v) {
		return true
	}
	if strings.EqualFold(v, key) || len(v) <= 64 && credentialName(v) {
		return true
	}
	if !quoted && sp.start > 0 && s[sp.start-1] == ':' && plainWord(v) && strings.ToLower(v) == v {
		return true // credentials:show, secrets:sync, token:read: a subcommand or a scope
	}
	if !quoted && sp.end+1 < len(s) && s[sp.end] == ' ' && isAlpha(s[sp.end+1]) && proseStop.has(strings.ToLower(v)) {
		return true // "a token: the relay and ...", "Authorization: who may ...": a sentence goes on
	}
	if !quoted && sp.end+1 < len(s) && s[sp.end] == ' ' && (isAlpha(s[sp.end+1]) || s[sp.end+1] == '_') && codeWords.has(v) {
		return true // token = await getToken(), secret = new Secret(...): code computes the value
	}
	switch {
	case v[0] == '$' && (strings.HasPrefix(v, "${") || strings.HasPrefix(v, "$(") || envName(v[1:])):
		return true
	case strings.HasPrefix(v, "{{") || strings.HasPrefix(v, "%") && strings.HasSuffix(v, "%"):
		return true
	case v[0] == '<' && v[len(v)-1] == '>':
		return true
	}
	if !quoted {
		if sp.end < len(s) && (s[sp.end] == '(' || s[sp.end] == '[') {
			return true
		}
		if codeRef(v) {
			return true
		}
		if sp.end < len(s) && (s[sp.end] == '{' || s[sp.end] == '$') {
			return true // linux-gomod-{{ checksum }}, app-${VERSION}: a template
		}
		if goDefine(s, sp.start) && identifier(v) {
			return true // Go: auth := username + ...
		}
	}
	return expression(s, sp, quoted, v)
}

// goDefine reports whether the value at v follows Go's := (not Make's
// ::= or :::=).
func goDefine(s string, v int) bool {
	j := v
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	return j >= 2 && s[j-2:j] == ":=" && (j < 3 || s[j-3] != ':')
}

// identifier reports whether v is a program identifier.
func identifier(v string) bool {
	if v == "" || isDigit(v[0]) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isAlnum(v[i]) && v[i] != '_' {
			return false
		}
	}
	return true
}

// expression reports whether a value is one operand of a larger
// expression: an identifier or a prefix literal ("Basic ", "Bearer ")
// that code joins with a variable (auth := user + ":" + pw,
// "Basic "+basicAuth(u, p)), not a value of its own.
func expression(s string, sp span, quoted bool, v string) bool {
	j := sp.end + boolInt(quoted)
	j = skipBlanks(s, j)
	if j >= len(s) || s[j] != '+' && !strings.HasPrefix(s[j:], "||") && !strings.HasPrefix(s[j:], "..") {
		return false
	}
	k := skipBlanks(s, j+1+boolInt(s[j] != '+'))
	if k < len(s) && (s[k] == '"' || s[k] == '\'' || s[k] == '`') {
		return false // "ghp_ab" + "cd": a literal joined to a literal
	}
	return quoted && strings.TrimSpace(v) != v || !quoted && identifier(v)
}

// credentialName reports whether a value is itself the name of a
// credential in UPPER_SNAKE case (password: DB_PASSWORD, Auth:
// `SERVER_TOKEN`): a reference to where the secret lives, not the secret.
func credentialName(v string) bool {
	if len(v) < 5 || !strings.Contains(v, "_") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !(c >= 'A' && c <= 'Z' || isDigit(c) || c == '_') {
			return false
		}
	}
	return classifyKey(v) != notCred
}

// envName reports whether v is a variable name in one case: [A-Z_]+ or
// [a-z_]+ ($HOME, $token), not a password that starts with '$'.
func envName(v string) bool {
	if v == "" {
		return false
	}
	up, low := true, true
	for i := 0; i < len(v); i++ {
		c := v[i]
		up = up && (c >= 'A' && c <= 'Z' || c == '_')
		low = low && (c >= 'a' && c <= 'z' || c == '_')
	}
	return up || low
}

// codeRef reports whether v is a dotted chain of identifiers without
// digits: os.environ, self.token, process.env.API_KEY.
func codeRef(v string) bool {
	dots := 0
	seg := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '.':
			if seg == 0 {
				return false
			}
			dots++
			seg = 0
		case isAlpha(c) || c == '_':
			seg++
		default:
			return false
		}
	}
	return dots > 0 && seg > 0
}

// randomLike reports whether v looks machine-generated: at least 10 token
// bytes without blanks, letters and digits mixed (or 16 mixed-case letters
// that are not CamelCase words), a Shannon entropy of at least 3 bits a
// byte, and not a path (an AWS secret may hold a slash, a path holds
// words) or a URL.
func randomLike(v string) bool {
	if len(v) < 10 || len(v) > 4096 || v[0] == '.' || v[0] == '~' || strings.Contains(v, "://") || pathLike(v) {
		return false
	}
	var lower, upper, digit int
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= 'a' && c <= 'z':
			lower++
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= '0' && c <= '9':
			digit++
		case c == '_' || c == '-' || c == '.' || c == '=' || c == '+' || c == '/' || c == '~' || c == '%' || c == ':' || c == '@' || c == '!' || c == '#' || c == '*' || c == '^' || c == '$':
		default:
			return false
		}
	}
	letters := lower + upper
	if !(digit >= 1 && letters >= 2) && !(lower > 0 && upper > 0 && len(v) >= 16 && !camelWords(v)) {
		return false
	}
	return entropy(v) >= 3
}

// camelWords reports whether every capital in v starts a run of at least
// two lower-case letters: TestRefreshToken is words, not randomness.
func camelWords(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] >= 'A' && v[i] <= 'Z' {
			if i+2 >= len(v) || !(v[i+1] >= 'a' && v[i+1] <= 'z' && v[i+2] >= 'a' && v[i+2] <= 'z') {
				return false
			}
		}
	}
	return true
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
