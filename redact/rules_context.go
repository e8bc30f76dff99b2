package redact

import "strings"

// contextRules judge values by the words and commands around them (see
// prose.go): prose that names a credential, a token answering a question,
// the output of a command that prints a secret file, cookies, htpasswd's
// positional password and SQL's quoted passwords.
func contextRules() []rule { return contextRuleTable }

// contextRuleTable is contextRules' table, laid out as data by the
// compiler: built per call, with its samples, it cost a hook process that
// redacts more than the rest of its first redaction. Its elements stay
// constants (the keyword lists derived from other tables are spelled out,
// held to them by TestSpelledKeywords): a call among them would run at
// every process start.
var contextRuleTable = []rule{
	{
		id: "prose-credential",
		// proseKeywords(), spelled out.
		keywords: []string{
			"password", "passwd", "passphrase", "passcode", "pin", "code", "secret", "token", "key",
			"credential", "creds", "login", "pass", "mnemonic", "phrase",
		},
		scan: scanProse,
	},
	{
		id: "question-answer-token",
		// A token pasted alone on the line after a question, or after
		// a few words of prose that hand it over ("Here you go:").
		keywords: []string{"?\n", "?\r", ":\n", ":\r"},
		scan:     scanQuestion,
	},
	{
		id:       "secret-file-output",
		keywords: []string{"cat ", "head ", "tail ", "less ", "more ", "bat ", "type ", "get-content ", "gc ", "strings "},
		scan:     scanSecretFileRead,
	},
	{
		id: "secret-command-output",
		// printerKeywords(), spelled out.
		keywords: []string{
			"printenv ", "echo ", "gh ", "glab ", "gcloud ", "az ", "aws ", "vault ", "op ", "pass ", "gopass ",
			"bw ", "lpass ", "security ", "secret-tool ", "keyring ", "heroku ", "doppler ", "kubectl ",
			"openssl ", "pwgen ", "rails ", "bin/rails ", "rake ", "mix ", "php ",
		},
		scan: scanSecretPrinter,
	},
	{
		id:       "secret-file-input",
		keywords: []string{"echo ", "printf ", "cat ", "tee "},
		scan:     scanSecretFileWrite,
	},
	{
		id:       "cookie",
		keywords: []string{"cookie", "-b"},
		scan:     scanCookie,
	},
	{
		id: "cookie-jar",
		// A Netscape cookie file line (curl -c, wget --save-cookies):
		// domain, subdomains, path, secure, expiry, name, value.
		keywords: []string{"\ttrue\t", "\tfalse\t"},
		scan:     scanCookieJar,
	},
	{
		id:       "htpasswd-b",
		keywords: []string{"htpasswd"},
		scan:     scanHtpasswd,
	},
	{
		id: "sql-password",
		// IDENTIFIED BY '...' and PASSWORD '...', the quoted value
		// also when a heredoc splits it over lines.
		keywords: []string{"identified", "password"},
		pattern:  `(?i)\b(?:identified\s+(?:with\s+[\w$]+\s+)?by(?:\s+password)?\s*|password(?:\s+|\s*=\s*)(?:password\s*\(\s*)?|password\s*\(\s*)'((?:[^'\\]|\\[\s\S]|'')*)'`,
		back:     1, fwd: 512,
		groups: []int{1},
		check:  sqlSecret,
	},
}

// sqlSecret vets a quoted SQL password: not empty, not a placeholder, a
// few lines at most.
func sqlSecret(v string) bool {
	return v != "" && len(v) <= 512 && strings.Count(v, "\n") <= 4 && hasAlnum(v) && !placeholderWord(v)
}

// scanHtpasswd reads htpasswd's command line: with -b the password is a
// positional argument, the third (file, user, password) or, with -n, the
// second. Flags that take a value (-C cost, -r rounds) are skipped with it.
func scanHtpasswd(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '.') {
		return nil
	}
	if i+k < len(s) && s[i+k] != ' ' && s[i+k] != '\t' {
		return nil
	}
	le := lineEnd(s, i)
	batch, stdout := false, false
	var pos []span
	ts := cliTokens(s, i+k, 24)
	for n := 0; n < len(ts) && ts[n].end <= le; n++ {
		t := s[ts[n].start:ts[n].end]
		if len(t) > 1 && t[0] == '-' {
			batch = batch || strings.ContainsRune(t[1:], 'b')
			stdout = stdout || strings.ContainsRune(t[1:], 'n')
			if t == "-C" || t == "-r" {
				n++
			}
			continue
		}
		pos = append(pos, ts[n])
	}
	need := 3
	if stdout {
		need = 2
	}
	if !batch || len(pos) < need {
		return nil
	}
	v := unquote(s, pos[need-1])
	if v.end <= v.start || placeholder(s, "password", v, v != pos[need-1]) {
		return nil
	}
	return []span{v}
}

// cookieAttrs are the Set-Cookie attributes, which carry no secret.
const cookieAttrs wordSet = "path domain expires max-age httponly secure samesite priority partitioned version comment"

// sessionCookie reports whether a cookie's name says it holds a session or
// a credential.
func sessionCookie(name string) bool {
	n := strings.ToLower(name)
	for _, w := range [...]string{"sess", "sid", "token", "auth", "csrf", "xsrf", "jwt", "remember", "login", "identity", "access", "refresh", "sso", "secret", "key"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// cookieValue judges one cookie's value.
func cookieValue(name, v string) bool {
	if len(v) < 8 || placeholderWord(v) {
		return false
	}
	return sessionCookie(name) || randomLike(v) || hexOnly(v, 16)
}

// scanCookie redacts the session and credential values of cookies: a
// Cookie or Set-Cookie header, curl's -b / --cookie, a cookies={...} map and
// document.cookie = "...". Preference cookies (theme=dark) stay.
func scanCookie(s string, i, k int, _ *compiledRule) []span {
	le := lineEnd(s, i)
	if k == 2 { // -b: curl's cookie flag only
		if i == 0 || s[i-1] != ' ' && s[i-1] != '\t' || !strings.Contains(s[lineStart(s, i):i], "curl") {
			return nil
		}
		return cookieArg(s, i+k, le, false)
	}
	if i > 0 && isAlnum(s[i-1]) && !(i >= 4 && strings.EqualFold(s[i-4:i], "set-")) {
		if !(i > 0 && s[i-1] == '.') {
			return nil
		}
	}
	e := i + k
	plural := e < len(s) && (s[e] == 's' || s[e] == 'S')
	if plural {
		e++
	}
	if e < len(s) && (isAlnum(s[e]) || s[e] == '_') {
		return nil
	}
	set := i >= 4 && strings.EqualFold(s[i-4:i], "set-")
	switch j := skipBlanks(s, e); {
	case i >= 2 && s[i-2:i] == "--": // --cookie VALUE, --cookie=VALUE
		if j < le && s[j] == '=' {
			j++
		}
		return cookieArg(s, skipBlanks(s, j), le, false)
	case j < le && (s[j] == '"' || s[j] == '\'') && j == e: // "cookies": {...} or "Cookie": "a=b"
		j = skipBlanks(s, j+1)
		if j < le && s[j] == ':' {
			v := skipBlanks(s, j+1)
			if v < le && s[v] == '{' {
				return cookieMap(s, v+1, min(len(s), v+4096))
			}
			return cookieArg(s, v, le, set)
		}
	case j < le && s[j] == ':' && !plural: // a header
		end := le
		if q := strings.IndexAny(s[j:le], `"'`); q >= 0 {
			end = j + q
		}
		return cookiePairs(s, j+1, end, set)
	case j < le && (s[j] == '=' || s[j] == ':'):
		v := skipBlanks(s, j+1)
		if v < len(s) && s[v] == '{' {
			return cookieMap(s, v+1, min(len(s), v+4096))
		}
		return cookieArg(s, v, le, set)
	}
	return nil
}

// scanCookieJar judges the value of the cookie file line holding the hit.
func scanCookieJar(s string, i, _ int, _ *compiledRule) []span {
	ls, le := lineStart(s, i), lineEnd(s, i)
	f := strings.Split(s[ls:le], "\t")
	if len(f) != 7 || !isDigits(f[4]) || !boolWord(f[1]) || !boolWord(f[3]) {
		return nil
	}
	if !cookieValue(f[5], f[6]) {
		return nil
	}
	return []span{{le - len(f[6]), le}}
}

func boolWord(w string) bool { return strings.EqualFold(w, "true") || strings.EqualFold(w, "false") }

// cookieArg reads one quoted or bare argument holding cookie pairs.
func cookieArg(s string, j, le int, set bool) []span {
	j = skipBlanks(s, j)
	if j >= le {
		return nil
	}
	if s[j] == '"' || s[j] == '\'' {
		k := strings.IndexByte(s[j+1:le], s[j])
		if k < 0 {
			k = le - j - 1
		}
		return cookiePairs(s, j+1, j+1+k, set)
	}
	e := j
	for e < le && !isSpace(s[e]) {
		e++
	}
	return cookiePairs(s, j, e, set)
}

// cookiePairs judges the name=value pairs of s[j:end] separated by ';'.
// In a Set-Cookie header only the first pair is a cookie.
func cookiePairs(s string, j, end int, set bool) []span {
	var out []span
	first := true
	for j < end {
		st := j
		for st < end && (s[st] == ' ' || s[st] == '\t') {
			st++
		}
		en := st
		for en < end && s[en] != ';' {
			en++
		}
		if eq := strings.IndexByte(s[st:en], '='); eq > 0 {
			name := strings.TrimSpace(s[st : st+eq])
			vs := st + eq + 1
			ve := vs
			for ve < en && s[ve] != ' ' && s[ve] != '\t' {
				ve++ // a cookie value holds no blank: what follows one is not the header's
			}
			if (!set || first) && !cookieAttrs.has(strings.ToLower(name)) && cookieValue(name, s[vs:ve]) {
				out = append(out, span{vs, ve})
			}
			if ve < en && strings.TrimSpace(s[ve:en]) != "" {
				break // the header ended at the blank (httpie's Cookie:a=b in a command)
			}
		}
		first = false
		j = en + 1
	}
	return out
}

// cookieMap judges the "name": "value" members of a flat map after its
// '{' at j.
func cookieMap(s string, j, end int) []span {
	var out []span
	for n := 0; n < 64 && j < end && s[j] != '}'; n++ {
		ks := skipSpace(s, j)
		name, _, ok := parseValue(s, ks)
		if !ok {
			break
		}
		c := skipSpace(s, name.end+1)
		if c >= end || s[c] != ':' && s[c] != '=' {
			break
		}
		v, _, ok := parseValue(s, skipSpace(s, c+1))
		if !ok {
			break
		}
		if cookieValue(s[name.start:name.end], s[v.start:v.end]) {
			out = append(out, v)
		}
		j = v.end + 1
		for j < end && s[j] != ',' && s[j] != '}' {
			j++
		}
		if j < end && s[j] == ',' {
			j++
		}
	}
	return out
}

// skipSpace skips blanks and line breaks.
func skipSpace(s string, j int) int {
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j
}
