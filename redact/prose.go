package redact

import "strings"

// This file judges bare values by the words and commands around them:
// "the root password is X", "a 48-character token alone on the line after
// a question", the output of `cat config/master.key`. A value that follows
// such words is judged by its shape: a name that says password takes
// anything that is not an English word, the others only what looks
// generated.

// nounClass is how strongly a prose noun says that the value it introduces
// is a credential.
type nounClass uint8

const (
	// weakNoun values ("the key is X", "token to X") are credentials only
	// when they look generated, a long hex string included.
	weakNoun nounClass = iota + 1
	// strongNoun values ("the password is X") are credentials unless they
	// are English words.
	strongNoun
	// codeNoun values ("the PIN is 4821", "verification code: 482913")
	// may be digits alone.
	codeNoun
	// phraseNoun values ("seed phrase: twelve plain words") run to the end
	// of the line.
	phraseNoun
)

// proseNouns are the nouns the prose rule starts at, with their class.
var proseNouns = [...]struct {
	word  string
	class nounClass
}{
	{"password", strongNoun}, {"passwd", strongNoun}, {"passphrase", strongNoun},
	{"passcode", codeNoun}, {"pin", codeNoun}, {"code", codeNoun},
	{"secret", weakNoun}, {"token", weakNoun}, {"key", weakNoun}, {"credential", weakNoun},
	{"creds", weakNoun}, {"login", weakNoun}, {"pass", weakNoun}, {"mnemonic", phraseNoun}, {"phrase", phraseNoun},
}

// codeQualifiers are the words that make "code" a credential: a one-time,
// verification or recovery code, not an exit or status code.
const codeQualifiers wordSet = "verification security one-time onetime otp 2fa mfa sms auth authentication " +
	"recovery backup login access confirmation"

// pinQualifiers are the words that make a lower-case "pin" a PIN.
const pinQualifiers wordSet = "card sim bank atm debit credit phone device security unlock access login my your"

// phraseQualifiers are the words that make "phrase" a wallet's or a key's
// secret phrase.
const phraseQualifiers wordSet = "seed recovery secret backup wallet mnemonic pass"

// proseStop are the words a prose value is not: articles, prepositions,
// adjectives and participles that follow "the password is" in ordinary
// sentences.
const proseStop wordSet = "a an the this that these those it its my your our their his her one two " +
	"in on at for of to from with by as into onto via per about under over out up off " +
	"is was are were be been being not no never also only just still now then here there " +
	"below above same different new old right wrong correct incorrect valid invalid empty blank " +
	"missing required optional mandatory set unset null none nil true false yes ok okay fine good " +
	"bad weak strong long short simple easy hard secure insecure safe unsafe known unknown hidden " +
	"visible case sensitive expired shown sent given printed displayed logged masked redacted " +
	"secret private public too very really usually always sometimes what which who where when why " +
	"how something anything nothing everything same another other any all some each every " +
	"needed necessary important ready active inactive enabled disabled available unavailable " +
	"stale fresh current previous next last first default same unchanged different " +
	"and or but if so because since while until unless generated rotated revoked stored saved " +
	"encrypted hashed changed reset updated configured defined exported injected provided " +
	"passed read loaded cached kept managed handled used supplied embedded typed entered"

// englishSuffixes are word endings that mark an English adjective,
// participle or abstract noun rather than a chosen password.
var englishSuffixes = [...]string{
	"ed", "ing", "ly", "ble", "ful", "ous", "ive", "ant", "ent", "ance", "ence", "ion", "ions",
	"ity", "ty", "cy", "ness", "ment", "ments", "al", "ic", "ics", "ary", "ory", "ure", "ise",
	"ize", "less", "est", "ship", "ism", "ist", "ate", "ish", "ward", "wise",
}

// englishWord reports whether v is one plain word in letters (lower case,
// or capitalized) that reads as English rather than as a chosen value.
func englishWord(v string) bool {
	if len(v) == 0 {
		return true
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || i == 0 && c >= 'A' && c <= 'Z' || c == '-' && i > 0 && i < len(v)-1) {
			return false
		}
	}
	w := strings.ToLower(v)
	if len(w) <= 3 || proseStop.has(w) {
		return true
	}
	if strings.Contains(w, "-") {
		return proseStop.has(w[:strings.IndexByte(w, '-')])
	}
	for _, suf := range englishSuffixes {
		if strings.HasSuffix(w, suf) && len(w) > len(suf)+2 {
			return true
		}
	}
	return false
}

// credShape reports whether v looks like a credential rather than a word, a
// number, a version, a path or a URL: generated-looking, or letters mixed
// with digits or symbols.
func credShape(v string) bool {
	if len(v) < 6 || len(v) > 512 || strings.Contains(v, "://") || pathLike(v) || versionLike(v) {
		return false
	}
	if strings.ContainsAny(v, "()[]{}<>*&") && !strings.ContainsAny(v, "!#$%^") {
		return false // code: *io.PipeWriter, f(x), []byte
	}
	if randomLike(v) {
		return true
	}
	var letters, digits, symbols, spaces int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case isAlpha(c):
			letters++
		case isDigit(c):
			digits++
		case c == ' ':
			spaces++
		case c > ' ' && c < 0x7f:
			symbols++
		default:
			return false
		}
	}
	if spaces > 0 {
		return letters > 0 && digits > 0 && len(v) >= 8
	}
	if dateLike(v) {
		return false
	}
	return letters > 0 && digits > 0 || letters > 0 && symbols >= 2 && len(v) >= 8 && mixedCase(v) && !joinedWords(v)
}

// joinedWords reports whether v is words joined by punctuation
// (Accept-Encoding, read:org), each part letters only.
func joinedWords(v string) bool {
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return !isAlpha(byte(r)) || r >= 0x80 }) {
		if !plainWord(part) {
			return false
		}
	}
	return true
}

// mixedCase reports whether v holds both lower- and upper-case letters.
func mixedCase(v string) bool {
	var lo, up bool
	for i := 0; i < len(v); i++ {
		lo = lo || v[i] >= 'a' && v[i] <= 'z'
		up = up || v[i] >= 'A' && v[i] <= 'Z'
	}
	return lo && up
}

// pathLike reports whether v is a file path rather than a token that
// happens to hold a slash: rooted (/, ~/, ./, a drive) with at least two
// segments, ending in a known file extension, or made of plain-word
// segments (lower case, digits, - _ .), as a module path or a URL path is.
func pathLike(v string) bool {
	if !strings.ContainsAny(v, `/\`) {
		return false
	}
	segs := strings.FieldsFunc(v, func(r rune) bool { return r == '/' || r == '\\' })
	if len(segs) == 0 {
		return true
	}
	last := segs[len(segs)-1]
	if dot := strings.LastIndexByte(last, '.'); dot > 0 && fileExts.has(strings.ToLower(last[dot+1:])) {
		return true
	}
	rooted := v[0] == '/' || v[0] == '~' || v[0] == '.' || v[0] == '\\' || len(v) > 2 && v[1] == ':' && isAlpha(v[0])
	if rooted && len(segs) >= 2 {
		return true
	}
	for _, sg := range segs {
		if mixedCase(sg) {
			return false
		}
	}
	return len(segs) >= 2
}

// versionLike reports whether v is a version: v1.2.3, 1.14.2-rc.1.
func versionLike(v string) bool {
	v = strings.TrimPrefix(strings.TrimPrefix(v, "v"), "V")
	dots := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '.':
			dots++
		case isDigit(c):
		case c == '-' || c == '+' || isAlpha(c):
			return dots >= 1 && i > 0 && isDigit(v[0])
		default:
			return false
		}
	}
	return dots >= 1 && len(v) > 0 && isDigit(v[0])
}

// dateLike reports whether v is a date or time: digits joined by - : T Z.
func dateLike(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && c != '-' && c != ':' && c != 'T' && c != 'Z' && c != '.' && c != '/' {
			return false
		}
	}
	return true
}

// hexOnly reports whether v is a hex string of at least n digits.
func hexOnly(v string, n int) bool {
	if len(v) < n {
		return false
	}
	for i := 0; i < len(v); i++ {
		if !isHex(v[i]) {
			return false
		}
	}
	return true
}

// proseValue judges a value introduced by a noun of class c: loose when a
// strong noun and a verb stand before it ("the password is hunter"),
// strict otherwise.
func proseValue(s string, sp span, quoted bool, c nounClass, loose bool) bool {
	v := s[sp.start:sp.end]
	if v == "" || placeholder(s, "", sp, quoted) || placeholderWord(v) {
		return false
	}
	if c == codeNoun && len(v) >= 4 && len(v) <= 10 && isDigits(v) {
		return true
	}
	if loose && c == strongNoun {
		if quoted {
			return hasAlnum(v) && !englishWord(v)
		}
		return !englishWord(v) && !strings.Contains(v, "://") && !pathLike(v) && !versionLike(v)
	}
	return credShape(v) || c >= weakNoun && hexOnly(v, 32)
}

// scanProse reads "NOUN [qualifier words] VERB VALUE" around a prose noun:
// "the root password is X", "the password I set was 'X'", "Use this API
// key (keep it private): X", "new password X", "set the token to X", "# the
// key is" with the value on the next line, "login is admin / X". A noun
// followed at once by = or : is an assignment, the assignment rule's.
func scanProse(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '.') || i > 1 && s[i-1] == '(' && (isAlnum(s[i-2]) || s[i-2] == '_') {
		return nil // req.password, Get(key string): code, not prose
	}
	e := i + k
	if e < len(s) && (s[e] == 's' || s[e] == 'S') {
		e++
	}
	if e < len(s) && (isAlnum(s[e]) || s[e] == '_' || s[e] == '-' || s[e] == '.' || s[e] == '(') {
		return nil // keyword, tokenizer, password_file, password-protected, token.Valid()
	}
	noun := strings.ToLower(s[i : i+k])
	var class nounClass
	for _, n := range proseNouns {
		if n.word == noun {
			class = n.class
		}
	}
	if noun == "code" && !codeQualifiers.has(prevWord(s, i)) || noun == "phrase" && !phraseQualifiers.has(prevWord(s, i)) {
		return nil
	}
	if noun == "key" && strings.EqualFold(prevWord(s, i), "primary") {
		return nil
	}
	if noun == "pin" && s[i:i+k] != "PIN" && !pinQualifiers.has(prevWord(s, i)) {
		return nil // pin a version, a pin of the spec
	}
	j := e
	if j < len(s) && (s[j] == '"' || s[j] == '\'') {
		j++
	}
	if op, next := operatorAt(s, skipBlanks(s, j)); op == "=" || op == ":" || op == ":=" || op == "=>" {
		if class == codeNoun || class == phraseNoun {
			// PIN: 4821, seed phrase: ...: names the assignment rule
			// judges too weakly.
			return proseValueAt(s, next, lineEnd(s, next), class, false)
		}
		return nil
	}
	if out := proseAfter(s, e, class, noun, setBefore(s, i)); out != nil {
		return out
	}
	return proseBefore(s, i, class)
}

// proseBefore reads the value stated before its noun: "Hunter2!x is my
// password", "X was the old key": VALUE, a verb, at most three words
// (an article, adjectives), the noun. The value must look like a
// credential whatever the noun.
func proseBefore(s string, i int, class nounClass) []span {
	j := i
	word := func() (st, en int) { // the word ending before j, blanks skipped
		en = j
		for en > 0 && en > i-256 && (s[en-1] == ' ' || s[en-1] == '\t') {
			en--
		}
		st = en
		for st > 0 && st > i-256 && !isSpace(s[st-1]) {
			st--
		}
		return st, en
	}
	for n := 0; n <= 3; n++ {
		st, en := word()
		if st == en {
			return nil
		}
		w := strings.ToLower(s[st:en])
		j = st
		if w == "is" || w == "was" || w == "=" || w == "are" {
			vs, ve := word()
			if vs == ve {
				return nil
			}
			sp := span{vs, ve}
			if q := s[vs]; (q == '"' || q == '\'' || q == '`') && ve-vs >= 2 && s[ve-1] == q {
				sp = span{vs + 1, ve - 1}
			}
			v := s[sp.start:sp.end]
			if placeholderWord(v) || !(credShape(v) || class == codeNoun && len(v) >= 4 && len(v) <= 10 && isDigits(v)) {
				return nil
			}
			return []span{sp}
		}
		if n == 3 || len(w) > 12 || !plainWord(w) {
			return nil
		}
	}
	return nil
}

// prevWord returns the lower-case word before the one starting at i.
func prevWord(s string, i int) string {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t' || s[j-1] == '-') {
		j--
	}
	st := j
	for st > 0 && (isAlnum(s[st-1]) || s[st-1] == '-') {
		st--
	}
	return strings.ToLower(s[st:j])
}

// proseVerbs are the words that introduce a value after a noun phrase.
const proseVerbs wordSet = "is was are were = -> => becomes equals to"

// proseBreaks end a noun phrase without a value.
const proseBreaks wordSet = "and or but if when while because since so then which"

// maxQualifier bounds the words between a noun and its verb.
const maxQualifier = 8

// setVerbs are the verbs that make a later "to" introduce a noun's value:
// "set the secret key for the app to X", "change the admin password on
// the router to X".
const setVerbs wordSet = "set change changed update updated reset rotate rotated"

// setBefore reports whether one of setVerbs stands at most four words
// before the noun starting at i, on its line.
func setBefore(s string, i int) bool {
	j := i
	for n := 0; n < 4; n++ {
		for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		st := j
		for st > 0 && st > i-64 && isAlpha(s[st-1]) {
			st--
		}
		if st == j {
			return false
		}
		if setVerbs.has(strings.ToLower(s[st:j])) {
			return true
		}
		j = st
	}
	return false
}

// proseAfter finds the verb after a noun ending at e and the value after
// it; set says a verb such as "set" stands before the noun, so that "to"
// after the noun's qualifiers introduces the value.
func proseAfter(s string, e int, class nounClass, noun string, set bool) []span {
	le := lineEndWithin(s, e, 512)
	j := e
	for w := 0; w <= maxQualifier; w++ {
		j = skipBlanks(s, j)
		if j >= le {
			return nil
		}
		ws := j
		for j < le && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		word := s[ws:j]
		lw := strings.ToLower(word)
		if w == 0 && class == strongNoun && !proseVerbs.has(lw) {
			// "new password X": a strong noun followed at once by its value.
			sp, q := bareOrQuoted(s, ws, le)
			if sp.end > sp.start && proseValue(s, sp, q, class, false) {
				return []span{sp}
			}
		}
		if w == 0 && class == weakNoun && !proseVerbs.has(lw) {
			// "here's my key X": a weak noun followed at once by a value
			// only when the value is a generated token by its shape.
			if sp, _ := bareOrQuoted(s, ws, le); sp.end > sp.start && bareTokenSecret(s[sp.start:sp.end]) {
				return []span{sp}
			}
		}
		if w == 0 && (word == "-" || word == "—" || word == "–") {
			return proseValueAt(s, j, le, class, true) // "admin password - X", "the key — X"
		}
		if lw == "to" && w > 0 && !set {
			continue // "the key to success": "to" is a verb only right after the noun
		}
		if (lw == "=" || lw == "->" || lw == "=>") && w > 0 {
			return nil // a symbol binds to the word before it, not to the noun
		}
		if proseVerbs.has(lw) || strings.HasSuffix(word, ":") && len(word) > 0 {
			if lw == "is" || lw == "was" || lw == "are" || lw == "were" {
				// "is now", "is set to", "is still", and "is:"
				for _, more := range [...]string{"now ", "set to ", "still ", "changed to "} {
					if k := skipBlanks(s, j); strings.HasPrefix(strings.ToLower(s[k:min(le, k+len(more))]), more) {
						j = k + len(more)
					}
				}
				if j < le && s[j] == ':' {
					j++
				}
			}
			return proseValueAt(s, j, le, class, lw != "to" && !strings.HasSuffix(word, ":") || noun == "password")
		}
		if (lw == "with" || lw == "as") && class == weakNoun {
			// "login with admin / S3cret": a pair, never a lone word
			if sp, _ := bareOrQuoted(s, skipBlanks(s, j), le); sp.end > sp.start {
				if _, pw, ok := userSlashPass(s, sp, le); ok {
					return []span{pw}
				}
			}
		}
		if proseBreaks.has(lw) || strings.ContainsAny(word[len(word)-1:], ".,;!?") || strings.ContainsAny(word, "{}") {
			return nil // a sentence ended, or code
		}
	}
	return nil
}

// proseValueAt reads the value after a verb ending at j: on the same line,
// or, when the verb ends the line, the lone token of the next line.
func proseValueAt(s string, j, le int, class nounClass, loose bool) []span {
	v := skipBlanks(s, j)
	if v >= le {
		sp, ok := loneNextLine(s, le)
		if !ok || !proseValue(s, sp, false, class, loose) {
			return nil
		}
		return []span{sp}
	}
	if class == phraseNoun {
		return phraseWords(s, v, le)
	}
	sp, q := bareOrQuoted(s, v, le)
	if sp.end <= sp.start {
		return nil
	}
	if !q && englishWord(s[sp.start:sp.end]) {
		// "the password is the same as before: X"
		if c := strings.Index(s[sp.end:le], ": "); c >= 0 && c < 64 {
			if w, q2 := bareOrQuoted(s, skipBlanks(s, sp.end+c+2), le); w.end > w.start && proseValue(s, w, q2, class, false) {
				return []span{w}
			}
		}
		return nil
	}
	if class == weakNoun {
		if u, pw, ok := userSlashPass(s, sp, le); ok {
			_ = u
			return []span{pw}
		}
	}
	if !proseValue(s, sp, q, class, loose) {
		return nil
	}
	return []span{sp}
}

// phraseWords reads a secret phrase: the rest of the line from v when it
// is at least four plain lower-case words (a BIP-39 mnemonic, a
// passphrase of words), quoted or not.
func phraseWords(s string, v, le int) []span {
	st, en := v, lineBody(s, v, le)
	if st < en && (s[st] == '"' || s[st] == '\'') && s[en-1] == s[st] {
		st, en = st+1, en-1
	}
	words := strings.Fields(s[st:en])
	if len(words) < 4 {
		return nil
	}
	for _, w := range words {
		for i := 0; i < len(w); i++ {
			if !(w[i] >= 'a' && w[i] <= 'z') {
				return nil
			}
		}
	}
	return []span{{st, en}}
}

// userSlashPass reads "admin / S3cret" (a login stated as user and
// password) starting at the value sp.
func userSlashPass(s string, sp span, le int) (user, pw span, ok bool) {
	j := skipBlanks(s, sp.end)
	if j >= le || s[j] != '/' || j == sp.end && !strings.ContainsAny(s[sp.start:sp.end], " ") {
		return span{}, span{}, false
	}
	k := skipBlanks(s, j+1)
	if k == j+1 {
		return span{}, span{}, false // "a/b" is a path, "a / b" a pair
	}
	p, _ := bareOrQuoted(s, k, le)
	if p.end <= p.start || !credShape(s[p.start:p.end]) {
		return span{}, span{}, false
	}
	return sp, p, true
}

// bareOrQuoted reads a quoted string or a bare token at v (before le), the
// bare one without the sentence punctuation that follows it.
func bareOrQuoted(s string, v, le int) (span, bool) {
	if v < le && (s[v] == '"' || s[v] == '\'' || s[v] == '`') {
		if k := strings.IndexByte(s[v+1:le], s[v]); k > 0 {
			return span{v + 1, v + 1 + k}, true
		}
		return span{}, false
	}
	e := v
	for e < le && !isSpace(s[e]) && s[e] != '"' && s[e] != '`' {
		e++
	}
	for e > v && strings.IndexByte(".,;:)]'?", s[e-1]) >= 0 {
		e--
	}
	if e > v && s[v] == '(' {
		return span{}, false
	}
	return span{v, e}, false
}

// lineBody returns the end of the content of the line s[st:en]: without
// trailing blanks, and without a trailing parenthesized remark (the
// description a permission card appends to a command: "... (Deploy)").
func lineBody(s string, st, en int) int {
	t := en
	for t > st && (s[t-1] == ' ' || s[t-1] == '\t') {
		t--
	}
	for n := 0; n < 2 && t > st && s[t-1] == ')'; n++ {
		k := strings.LastIndex(s[st:t], " (")
		if k <= 0 || strings.ContainsAny(s[st+k+2:t-1], "()") {
			break
		}
		t = st + k
		for t > st && (s[t-1] == ' ' || s[t-1] == '\t') {
			t--
		}
	}
	return t
}

// lineEnd returns the end of the line holding j.
//
// The scan is bounded (maxLine): the rules look at a line around a hit,
// and a megabyte without a line break must cost each hit a bounded look,
// not the rest of the input.
func lineEnd(s string, j int) int { return lineEndWithin(s, j, maxLine) }

// lineEndWithin is lineEnd looking at most n bytes on: a rule that reads a
// few words after a hit (a noun's verb and value) needs no more.
func lineEndWithin(s string, j, n int) int {
	lim := min(len(s), j+n)
	if k := strings.IndexAny(s[j:lim], "\r\n"); k >= 0 {
		return j + k
	}
	return lim
}

// maxLine bounds how far lineEnd and lineStart look for a line break.
const maxLine = 4096

// loneNextLine returns the next line after the line end le when it holds
// one token and nothing else (a blank line between is skipped).
func loneNextLine(s string, le int) (span, bool) {
	j := le
	for n := 0; n < 2; n++ {
		if j < len(s) && s[j] == '\r' {
			j++
		}
		if j >= len(s) || s[j] != '\n' {
			return span{}, false
		}
		j++
		st := skipBlanks(s, j)
		en := lineEnd(s, st)
		if st == en {
			j = en
			continue
		}
		t := lineBody(s, st, en)
		if strings.ContainsAny(s[st:t], " \t") {
			return span{}, false
		}
		return span{st, t}, true
	}
	return span{}, false
}

// scanQuestion redacts a token that stands alone on the line after a
// question (the answer a human pasted): judged by its shape, since a
// question followed by an id, a hash or a path is ordinary.
func scanQuestion(s string, i, _ int, _ *compiledRule) []span {
	if s[i] == ':' && !proseLabel(s, i) {
		return nil // a YAML key, a heading of data: not a person handing a value over
	}
	le := i + 1
	sp, ok := loneNextLine(s, le)
	if !ok || !bareTokenSecret(s[sp.start:sp.end]) {
		return nil
	}
	return []span{sp}
}

// proseLabel reports whether the line ending in the colon at i is a few
// words of prose ("Here you go:", "the new one:"), not a YAML key or a
// list item's name.
func proseLabel(s string, i int) bool {
	st := lineStart(s, i)
	for _, sep := range [...]string{" — ", ": "} {
		if k := strings.LastIndex(s[st:i], sep); k >= 0 {
			st += k + len(sep) // a card's command after its title, a question after its header
		}
	}
	line := strings.TrimSpace(s[st:i])
	if line == "" || line[0] == '-' || line[0] == '#' || line[0] == '"' || st < i && (s[st] == ' ' || s[st] == '\t') {
		return false
	}
	words := strings.Fields(line)
	if len(words) < 2 || len(words) > 8 {
		return false
	}
	for _, w := range words {
		if !plainWord(strings.Trim(w, ",'!")) {
			return false
		}
	}
	return true
}

// bareTokenSecret judges a token with no name: at least 20 token bytes,
// letters of both cases or letters and digits, a high entropy, and none of
// the shapes ids and digests take (hex, UUIDs, ULIDs, digests, integrity
// strings, paths, versions, URLs, addresses).
func bareTokenSecret(v string) bool {
	if len(v) < 20 || len(v) > 1024 || hexOnly(v, 1) || uuidLike(v) || ulidLike(v) || digestLike(v) ||
		pathLike(v) || versionLike(v) || strings.ContainsAny(v, "@:") {
		return false
	}
	var lower, upper, digit int
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 'a' && c <= 'z':
			lower++
		case c >= 'A' && c <= 'Z':
			upper++
		case isDigit(c):
			digit++
		case c == '_' || c == '-' || c == '+' || c == '/' || c == '=' || c == '.' || c == '~':
		default:
			return false
		}
	}
	classes := boolInt(lower > 0) + boolInt(upper > 0) + boolInt(digit > 0)
	return classes >= 2 && (lower+upper) >= 4 && digit >= 2 && entropy(v) >= 3.5 && !slugLike(v) && !wordsAndNumber(v)
}

// wordsAndNumber reports whether v is a program identifier of words and a
// number or two (eventBusRegistry2024, oauth2ClientConfig): runs of at
// least three letters, each capital starting a lower-case word, and at
// most two runs of at most four digits. A generated token's letters come
// in short runs of mixed case.
func wordsAndNumber(v string) bool {
	digitRuns := 0
	for i := 0; i < len(v); {
		j := i
		if isDigit(v[i]) {
			for j < len(v) && isDigit(v[j]) {
				j++
			}
			if digitRuns++; digitRuns > 2 || j-i > 4 {
				return false
			}
		} else {
			for j < len(v) && isAlpha(v[j]) {
				j++
			}
			run := v[i:j]
			if j < len(v) && len(run) > 3 && (run[len(run)-1] == 'V' || run[len(run)-1] == 'v') {
				run = run[:len(run)-1] // GatewayV2: a version's letter
			}
			if len(run) < 3 || !camelWords(run) {
				return false
			}
		}
		i = j
	}
	return true
}

// slugLike reports whether v is words and numbers joined by punctuation
// (ci-deploy-token-2026, release_2026_03, api.v2.users): a name someone
// chose, not a generated token.
func slugLike(v string) bool {
	parts := strings.FieldsFunc(v, func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == '/' })
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if !(wordPart(p) && len(p) <= 16) && !(isDigits(p) && len(p) <= 8) && !wordsAndNumber(p) {
			return false
		}
	}
	return true
}

// wordPart reports whether p is one part of a name people write: a plain
// word, a capitalized one (X-Hub-Signature), or a single letter.
func wordPart(p string) bool {
	return plainWord(p) || len(p) == 1 && isAlpha(p[0]) || isAlpha(p[0]) && plainWord(strings.ToLower(p[:1])+p[1:])
}

// uuidLike reports whether v is a UUID (8-4-4-4-12 hex).
func uuidLike(v string) bool {
	if len(v) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if v[i] != '-' {
				return false
			}
		} else if !isHex(v[i]) {
			return false
		}
	}
	return true
}

// ulidLike reports whether v is a ULID: 26 Crockford base32 characters.
func ulidLike(v string) bool {
	if len(v) != 26 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !isDigit(c) && !(c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// digestLike reports whether v is a digest or an integrity string:
// sha256:..., sha512-..., md5-....
func digestLike(v string) bool {
	for _, p := range [...]string{"sha1", "sha224", "sha256", "sha384", "sha512", "md5", "blake2b", "blake3"} {
		if len(v) > len(p)+1 && strings.EqualFold(v[:len(p)], p) && (v[len(p)] == ':' || v[len(p)] == '-' || v[len(p)] == '=') {
			return true
		}
	}
	return false
}

// readers are the commands whose output is a file's content.
var readers = [...]string{"cat", "head", "tail", "less", "more", "bat", "type", "get-content", "gc", "strings", "xxd", "od", "hexdump", "base64"}

// scanSecretFileRead redacts the output of a command that prints a file
// whose name says it holds a secret (`cat config/master.key`, `cat
// .vault_pass`, `head -1 secrets/ci_token.txt`): every following line
// that holds one token, up to the next prompt, a key block or a blank line.
func scanSecretFileRead(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '-' || s[i-1] == '.' || s[i-1] == '/') {
		return nil
	}
	word := strings.ToLower(s[i : i+k])
	known := false
	for _, r := range readers {
		known = known || r == strings.TrimSpace(word)
	}
	if !known || !commandStart(s, i) {
		return nil
	}
	le := lineEnd(s, i)
	secret, phrase := false, false
	for _, t := range cliTokens(s, i+k, 16) {
		if t.end > le {
			break
		}
		name := s[unquote(s, t).start:unquote(s, t).end]
		if name == "" || name[0] == '-' || isDigits(name) {
			continue // flags and their counts (head -n 1)
		}
		if !fileLike(name) {
			return nil // every argument is a file: "type token struct{}" is code
		}
		if sec, ph := secretFileName(name); sec {
			secret, phrase = true, phrase || ph
		}
	}
	if !secret {
		return nil
	}
	var out []span
	nextLines(s, le, func(n, st, t int) bool {
		line := s[st:t]
		if line == "" || promptLine(line) || strings.HasPrefix(line, "-----") || strings.HasPrefix(line, "---- ") {
			return false
		}
		if (!strings.ContainsAny(line, " \t") || phrase && n == 0) && len(line) >= 4 && !placeholderWord(line) {
			out = append(out, span{st, t})
		}
		return true
	})
	return out
}

// maxOutputLines bounds the lines a rule reads after a command.
const maxOutputLines = 64

// nextLines calls fn with each line after the line end le (its number
// from 0, the start of its content and the end of its body, see
// lineBody) until fn returns false or maxOutputLines have been read.
func nextLines(s string, le int, fn func(n, st, t int) bool) {
	j := le
	for n := 0; n < maxOutputLines && j < len(s); n++ {
		if s[j] == '\r' {
			j++
		}
		if j >= len(s) || s[j] != '\n' {
			return
		}
		st := skipBlanks(s, j+1)
		en := lineEnd(s, st)
		if !fn(n, st, lineBody(s, st, en)) {
			return
		}
		j = en
	}
}

// commandStart reports whether a word at i starts a shell command: at the
// start of a line (after a prompt marker), after a command separator or
// sudo, or after the dash a permission card puts before its command.
func commandStart(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j == 0 || s[j-1] == '\n' || s[j-1] == '\r' {
		return true
	}
	w := j
	for w > 0 && !isSpace(s[w-1]) {
		w--
	}
	prev := s[w:j]
	if w == 0 || s[w-1] == '\n' {
		if prev == "$" || prev == "#" || prev == ">" || prev == "%" || prev == "❯" || prev == "➜" || strings.HasSuffix(prev, "$") || strings.HasSuffix(prev, ">") {
			return true
		}
	}
	switch prev {
	case "&&", "||", ";", "|", "(", "$(", "`", "sudo", "then", "do", "—", "-", "exec", "time", "$", "❯", "➜":
		return true
	}
	// "Permission requested: cat ...", "Run: cat ...": a card or a label
	// states the command after a colon.
	return strings.HasSuffix(prev, ";") || strings.HasSuffix(prev, "$(") || strings.HasSuffix(prev, "`") ||
		strings.HasSuffix(prev, "&&") || strings.HasSuffix(prev, ":") && len(prev) > 1
}

// promptLine reports whether a line starts a new shell command: a prompt
// marker or an assignment-free command line.
func promptLine(l string) bool {
	for _, p := range [...]string{"$ ", "> ", "# ", "% ", "PS ", "❯ ", "➜ "} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// fileLike reports whether a command's argument names a file: a path, a
// name with an extension or a dot file, or a key file's usual bare name.
func fileLike(name string) bool {
	if strings.ContainsAny(name, "./\\~") {
		return true
	}
	switch name {
	case "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "credentials", "token", "secret", "secrets":
		return true
	}
	return false
}

// secretFileName judges a file a reader prints: whether its name says it
// holds a secret, and whether that secret is a phrase (a password file,
// whose one line may hold blanks).
func secretFileName(path string) (secret, phrase bool) {
	base := strings.ToLower(path[strings.LastIndexAny(path, `/\`)+1:])
	if base == "" || strings.HasSuffix(base, ".pub") || strings.Contains(base, "public") ||
		strings.HasSuffix(base, ".crt") || strings.HasSuffix(base, ".cer") || strings.Contains(base, "cert") {
		return false, false
	}
	for _, w := range [...]string{"pass", "pwd", "passphrase"} {
		if strings.Contains(base, w) {
			return true, true
		}
	}
	for _, w := range [...]string{"secret", "token", "apikey", "api_key", "api-key", "credential", "master.key",
		"id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", ".netrc", ".pgpass", "htpasswd", "private"} {
		if strings.Contains(base, w) {
			return true, false
		}
	}
	for _, ext := range [...]string{".key", ".pem", ".ppk", ".p8", ".jwk", ".secret", ".token"} {
		if strings.HasSuffix(base, ext) {
			return true, false
		}
	}
	return false, false
}

// placeholderWord reports whether v stands in for a credential in a sample
// or a template: REPLACE_ME, CHANGE_ME, your-api-key-here, <insert ...>,
// xxxx.
func placeholderWord(v string) bool {
	n := strings.ToLower(strings.Trim(v, `"'<>{}[]() `))
	if n == "" {
		return true
	}
	norm := squeeze(n, "_- .")
	for i := 0; i < len(norm); i++ {
		if !isAlpha(norm[i]) {
			return strings.Trim(norm, "x*") == "" // xxxx, ****
		}
	}
	if strings.Trim(norm, "x") == "" || placeholderExact.has(norm) {
		return true
	}
	if pre, ok := strings.CutSuffix(v, "..."); ok && len(pre) <= 12 {
		return true // sk-ant-..., ghp_...: a documented shape, not a value
	}
	for _, p := range [...]string{"replaceme", "replacewith", "replacethis", "changeme", "changethis", "insert",
		"enteryour", "enterthe", "fillin", "putyour", "your", "todo", "fixme", "placeholder", "dummy"} {
		if strings.HasPrefix(norm, p) {
			return true
		}
	}
	if strings.HasSuffix(norm, "here") {
		for _, w := range [...]string{"key", "token", "secret", "pass", "value", "your", "id"} {
			if strings.Contains(norm, w) {
				return true
			}
		}
	}
	return false
}

// placeholderExact are whole values that are stand-ins.
const placeholderExact wordSet = "example sample tbd tba none notset unset empty blank"

// squeeze returns s without the bytes in drop.
func squeeze(s, drop string) string {
	if !strings.ContainsAny(s, drop) {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(drop, s[i]) < 0 {
			b = append(b, s[i])
		}
	}
	return string(b)
}

// scanSecretFileWrite redacts what a command writes into a file whose name
// says it holds a secret: `echo VALUE > ~/.vault_pass`, `printf %s VALUE |
// tee secrets/token`, and the body of `cat > FILE <<EOF` or `tee FILE
// <<EOF` up to its delimiter. A key block in the body is left to the key
// rule, so a certificate written to a .pem file stays.
func scanSecretFileWrite(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '-' || s[i-1] == '.' || s[i-1] == '/') {
		return nil
	}
	cmd := strings.TrimSpace(strings.ToLower(s[i : i+k]))
	if !commandStart(s, i) {
		return nil
	}
	le := lineEnd(s, i)
	line := s[i:le]
	if h := strings.Index(line, "<<"); h >= 0 && (cmd == "cat" || cmd == "tee") && !strings.HasPrefix(line[h:], "<<<") {
		file := ""
		if cmd == "cat" {
			if r := strings.IndexByte(line, '>'); r >= 0 {
				if ts := cliTokens(s, i+r+1+boolInt(r+1 < len(line) && line[r+1] == '>'), 1); len(ts) == 1 {
					file = s[unquote(s, ts[0]).start:unquote(s, ts[0]).end]
				}
			}
		} else {
			for _, t := range cliTokens(s, i+k, 8) {
				if n := s[t.start:t.end]; n[0] != '-' {
					file = s[unquote(s, t).start:unquote(s, t).end]
					break
				}
			}
		}
		sec, phrase := secretFileName(file)
		if !sec || !fileLike(file) {
			return nil
		}
		d := strings.TrimLeft(line[h+2:], "-~ \t")
		de := 0
		for de < len(d) && !isSpace(d[de]) && d[de] != ';' && d[de] != '>' && d[de] != '|' {
			de++
		}
		delim := strings.Trim(d[:de], `'"`)
		if delim == "" {
			return nil
		}
		return heredocBody(s, le, delim, phrase)
	}
	if cmd != "echo" && cmd != "printf" {
		return nil
	}
	ts := cliTokens(s, i+k, 16)
	if len(ts) == 0 || ts[len(ts)-1].end > le {
		return nil
	}
	j := skipBlanks(s, ts[len(ts)-1].end)
	file := ""
	switch {
	case j < le && s[j] == '>':
		if j+1 < le && s[j+1] == '>' {
			j++
		}
		if f := cliTokens(s, j+1, 1); len(f) == 1 {
			file = s[unquote(s, f[0]).start:unquote(s, f[0]).end]
		}
	case j < le && s[j] == '|':
		f := cliTokens(s, j+1, 4)
		if len(f) >= 2 && s[f[0].start:f[0].end] == "tee" {
			for _, t := range f[1:] {
				if n := s[t.start:t.end]; n[0] != '-' {
					file = s[unquote(s, t).start:unquote(s, t).end]
					break
				}
			}
		}
	}
	if sec, _ := secretFileName(file); !sec || !fileLike(file) {
		return nil
	}
	var out []span
	for n, t := range ts {
		v := unquote(s, t)
		val := s[v.start:v.end]
		if val == "" || val[0] == '-' && n == 0 || val[0] == '$' || cmd == "printf" && strings.Contains(val, "%") || !hasAlnum(val) {
			continue
		}
		out = append(out, v)
	}
	return out
}

// heredocBody returns the lines of a heredoc that starts after the line
// end le, up to its delimiter line (or the text's end: a card may be cut
// short): each line that holds one token (or, for a password file, each
// line whole), key blocks skipped.
func heredocBody(s string, le int, delim string, phrase bool) []span {
	var out []span
	inBlock := false
	nextLines(s, le, func(_, st, t int) bool {
		switch line := s[st:t]; {
		case line == delim:
			return false
		case strings.HasPrefix(line, "-----BEGIN") || strings.HasPrefix(line, "---- BEGIN"):
			inBlock = true
		case strings.HasPrefix(line, "-----END") || strings.HasPrefix(line, "---- END"):
			inBlock = false
		case inBlock || line == "" || placeholderWord(line):
		case phrase || !strings.ContainsAny(line, " \t=") && len(line) >= 4:
			out = append(out, span{st, t})
		}
		return true
	})
	return out
}
