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
		tp: []string{
			"the root password is Wq8!zT3#pL and sudo works", "my passphrase is harbor-lime-77",
			"the key is AWiLMV5PhzRkG0JFR4bjauImjyvyuS5kQ5", "The signing secret is 3c9f1e7a5b2d8046c1e9a7f3b5d20864",
			"the password I set was \"Blue#Heron77\"", "new password Kd9#xQ2mV4", "# the key is\nZx9Lm2Qw8Er4Ty7Ui1Op5As3Df6Gh0Jk9Lz2Xc8V",
			"set the token to Pq7Wm3Kx9Zt1Lv5Nb8Rc2Yd6 now", "Use this API key (keep it private): kR2pL8xQ4wZ6tN0mB3cV",
			"login for the router is admin / S3cure!pw2026", "the verification code is 482913x",
			"Hunter2!x is my new password", "'Qv8#Lm3zTx' was the old wifi password",
			"set the secret key for the app to dj-x8#k2!m9q@v4w7z1b5 first", "login with admin / h7Kw!2pQ on staging",
			"- staging admin password - Orange&Lime42", "here's my key Tz4Wc6Yd1Fh5Jg0Rx8As3Df7Gh2Kq",
			"the vpn pass for tonight is Gs8#Lq2mWx7",
		},
		fp: []string{
			"The key is to cache the module downloads.", "the password is required", "the secret is consistency",
			"The token is valid for 3600 seconds", "your password is incorrect", "the passphrase is empty",
			"the key is missing from the map", "the exit code is 1", "primary key is user_id",
			"the password reset flow", "Enter passphrase for key '/srv/k':", "a keyboard and a tokenizer",
			"the key to success is practice", "the token is stored in the keychain",
			"Consistency is the key to success.", "That is my password.", "v1.2.3 is the current key",
			"the key eventBusSubscriberRegistry2024 is the bean name", "the pass rate is 98.5% on main",
			"a second pass over the AST resolves the imports", "token 01JX9YB3P4T9ZK3V8Q2W6E5R7T expired",
			"set the token for the job to expire hourly", "login with your SSO account / or a passkey",
			"the key - a random string - goes here", "password — required",
		},
	},
	{
		id: "question-answer-token",
		// A token pasted alone on the line after a question, or after
		// a few words of prose that hand it over ("Here you go:").
		keywords: []string{"?\n", "?\r", ":\n", ":\r"},
		scan:     scanQuestion,
		tp: []string{
			"Which token should I use?\n0ZX2rNI0lsbvhE5XMEkIHzzqffIORByrOq", "Here you go:\nRb4Tn8Vc2Xz6Lm0Qp3Ws7Ed1Rf5Tg9Yh3Uj",
			"Auth: the new one:\nWq3Er7Ty1Ui5Op9As3Df7Gh1Jk5Lz9Xc3Vb",
		},
		fp: []string{
			"ca_bundle:\n  LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM", "  data:\nZXlKMGFHVnRaU0k2SW1SaGNtc2lmUT09",
			"What should the token be named?\nci-deploy-token-2026", "The new tag:\nrelease_2026_03",
			"Release: the new tag:\nv2.14.0-rc.3", "Which branch should I use?\nfeature/PaymentGatewayV2Refactor2026", "Commit: the fix landed in:\n3f786850e387550fdab836ed7e6dc881de23001b",
			"Which commit?\n3f786850e387550fdab836ed7e6dc881de23001b", "Which request?\n7c9e6679-7425-40de-944b-e07fc1f90ae7",
			"Which event?\n01JX9YB3P4T9ZK3V8Q2W6E5R7T", "Where?\n/etc/nginx/sites-available/default.conf",
			"Which image?\nsha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		},
	},
	{
		id:       "secret-file-output",
		keywords: []string{"cat ", "head ", "tail ", "less ", "more ", "bat ", "type ", "get-content ", "gc ", "strings "},
		scan:     scanSecretFileRead,
		tp: []string{
			"$ cat config/master.key\n246b56c06b02803ca9708043bdd1fd2d", "$ cat ~/.ansible/.vault_pass\nharbor mosaic 88",
			"head -1 secrets/ci_token.txt\n8c1f0e2d4b6a9e7c5d3b1a0f8e6d4c2b1a9f7e5d",
		},
		fp: []string{"$ cat README.md\n# title", "$ cat ~/.ssh/id_ed25519.pub\nssh-ed25519 AAAAC3Nz dev@host", "cat VERSION\n1.14.2"},
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
		tp: []string{
			"$ gh auth token\nQm9Lx2Vb8Nc4Rt6Yh1Jk5Pd0Zz", "$ vault kv get -field=password secret/db\nhunter-two-22",
			"$ openssl rand -hex 32\n3f786850e387550fdab836ed7e6dc881de23001b3f786850e387550fdab836ed",
			"$ printenv STRIPE_SECRET_KEY\nrk9Lm2Nx4Pv6Rt8Bw0Yc", "$ echo $DB_PASSWORD\nWinter2026",
			"$ aws configure get aws_secret_access_key\n7CmY/uCu3ZR1zTOlUcR64cXQLioDnkHIfxIq2HZt",
			"$ kubectl get secret api -o jsonpath='{.data.token}' | base64 -d\n8kLm2Nq4Ps6Ru8Tw0Vy2Xa4Zc6Be8Dg",
			"$ pass show work/vpn\nmy vpn pass phrase\nuser: ops",
		},
		fp: []string{
			"$ echo $HOME\n/home/dev", "$ printenv PATH\n/usr/bin:/bin", "$ gh auth status\nLogged in to github.com",
			"$ kubectl get secrets\nNAME   TYPE   DATA   AGE", "$ vault kv get secret/db\n====== Data ======",
			"echo $TOKEN_COUNT\n12", "$ echo $API_KEY\n\n$ ls",
		},
	},
	{
		id:       "secret-file-input",
		keywords: []string{"echo ", "printf ", "cat ", "tee "},
		scan:     scanSecretFileWrite,
		tp: []string{
			"echo 'harbor-mosaic-88' > ~/.vault_pass", "printf %s Zk4Pq9Lw2Xn7 | tee secrets/api_token",
			"cat > ~/.config/app/token <<'EOF'\nQ7w3Lm9Xz2Vb8Nc4Rt6Yh1Jk5Pd0\nEOF", "tee .vault_password <<EOF\nmy long pass phrase\nEOF",
		},
		fp: []string{"echo hello > notes.txt", `echo "$TOKEN" > ~/.token`, "cat > server.pem <<EOF\n-----BEGIN CERTIFICATE-----\nMIIBlzCCAT2g\n-----END CERTIFICATE-----\nEOF"},
	},
	{
		id:       "cookie",
		keywords: []string{"cookie", "-b"},
		scan:     scanCookie,
		tp: []string{
			"curl -b 'sessionid=5mn6vkclbe2wo1p29g62exjvo0tv550u' https://x", "Cookie: sid=9f8e7d6c5b4a3928; theme=dark",
			"set-cookie: user_session=gH5jK7lZ9xC1vB3nM5qW; Path=/", `cookies={"sessionid": "p0o9i8u7y6t5r4e3w2q1"}`,
			`document.cookie = "auth=Zx8Cv7Bn6Mm5Ll4Kk3"`,
		},
		fp: []string{"Cookie: theme=dark; lang=en-US", "git checkout -b feature/cookie-banner", "curl -b cookies.txt https://x", "set-cookie: a=b; Path=/"},
	},
	{
		id: "cookie-jar",
		// A Netscape cookie file line (curl -c, wget --save-cookies):
		// domain, subdomains, path, secure, expiry, name, value.
		keywords: []string{"\ttrue\t", "\tfalse\t"},
		scan:     scanCookieJar,
		tp:       []string{".example.com\tTRUE\t/\tTRUE\t1767225600\tsessionid\t5mn6vkclbe2wo1p29g62exjv"},
		fp:       []string{".example.com\tTRUE\t/\tFALSE\t1767225600\ttheme\tdark", "a\ttrue\tb"},
	},
	{
		id:       "htpasswd-b",
		keywords: []string{"htpasswd"},
		scan:     scanHtpasswd,
		tp: []string{
			"htpasswd -b .htpasswd admin Htp4ss", "htpasswd -nb admin Htp4ss", "htpasswd -b -c /etc/h deploy Qn4#vR8s (Create the user)",
			"htpasswd -B -C 12 -b /srv/users ops Lp0-Zx7*Wq && reload",
		},
		fp: []string{"htpasswd -c .htpasswd admin", "htpasswd -v .htpasswd admin"},
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
		tp: []string{
			"CREATE USER 'a'@'%' IDENTIFIED BY 'Mv7#qL2\nxR9!tB';", "ALTER ROLE b WITH LOGIN PASSWORD 'Tg5kW\n2pNz8';",
			"SET PASSWORD FOR 'u'@'h' = PASSWORD('x9Y8z7')",
		},
		fp: []string{"CREATE USER 's'@'localhost' IDENTIFIED WITH auth_socket;", "password ''", "IDENTIFIED BY PASSWORD"},
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
