package redact

import "strings"

// This file holds the command-line forms of credentials: the short flags
// and positional arguments of the tools agents most often ask permission to
// run (database clients, ssh/sshpass, curl/wget/httpie, registry and cloud
// logins, `config set` and `secrets set` verbs, echo piped into
// --password-stdin). Long flags (--password, --token) and KEY=VALUE
// arguments are the generic rules' work.

// cliRest is the rest of a command up to the next command separator
// outside quotes (a quoted password may hold '&' or ';': -N 'a&b' is one
// argument). Greedy on purpose: a lazy repetition costs RE2 far more to
// compile, and a rule that must find every flag of a command uses an
// inner pattern. A quote that nothing closes is one byte.
const cliRest = `(?:[^\n;|&'"]|'[^'\n]*'|"[^"\n]*"|['"])*`

// cliVal is a flag's value: quoted, or a bare word not starting with '-'.
const cliVal = `('[^'\n]+'|"[^"\n]+"|[^\s'"\-][^\s'";|&]*)`

// cliAttached is a value written right after its flag (-pSECRET).
const cliAttached = `('[^'\n]+'|"[^"\n]+"|[^\s'";|&]+)`

// cliRules are the command-line forms of credentials.
func cliRules() []rule { return cliRuleTable }

// cliRuleTable is cliRules' table, laid out as data by the compiler as
// contextRuleTable is, for the same reason (built per call it cost a hook
// process that redacts more than the rest of its first redaction).
//
// Its first rules are short-flag rules, one pattern spelled out per
// flag: the rule for a short flag of some commands (an RE2 alternation,
// CMDS) that takes a secret. Its pattern, \b(?:CMDS)\b then cliRest, finds
// the command up to its separator; its inner pattern, [ \t] then the
// flag, what separates it from its value and the value (cliVal, or
// cliAttached for a value written right after the flag), every such flag
// in it. It looks 128 bytes back and 512 forward and redacts group 1.
var cliRuleTable = []rule{
	{
		id: "mysql-p", keywords: []string{"mysql", "mariadb"},
		pattern: `\b(?:(?i:mysql|mariadb)[\w-]*)\b` + cliRest,
		inner:   `[ \t]-p` + cliAttached,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "sshpass", keywords: []string{"sshpass"},
		pattern: `\b(?:sshpass)\b` + cliRest,
		inner:   `[ \t]-p[ \t]*` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "registry-login-p", keywords: []string{"login"},
		pattern: `\b(?:(?:docker|podman|nerdctl|buildah|oras|skopeo|crane|finch|cosign|helm|regctl)` + cliRest + `\blogin)\b` + cliRest,
		inner:   `[ \t]-p(?:[ \t]+|=)?` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "cloud-login-p", keywords: []string{"login", "twine"},
		pattern: `\b(?:(?:az|oc|cf|argocd|rancher|tsh|harbor|twine)[ \t]+(?:login|upload))\b` + cliRest,
		inner:   `[ \t]-p[ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "db-client-p", keywords: []string{"mongo", "cqlsh"},
		pattern: `\b(?:mongo(?:sh|dump|restore|export|import|stat|top|files)?|cqlsh)\b` + cliRest,
		inner:   `[ \t]-p[ \t]*` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "upper-P", keywords: []string{"sqlcmd", "bcp", "mssql", "isql", "osql", "zip", "mosquitto_"},
		pattern: `\b(?:sqlcmd|bcp|mssql-cli|isql|osql|zip|unzip|zipcloak|mosquitto_(?:pub|sub|rr))\b` + cliRest,
		inner:   `[ \t]-P[ \t]*` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "7z-p", keywords: []string{"7z"},
		pattern: `\b(?:7z[ar]?)\b` + cliRest,
		inner:   `[ \t]-p` + cliAttached,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "redis-cli-a", keywords: []string{"redis-cli"},
		pattern: `\b(?:redis-cli)\b` + cliRest,
		inner:   `[ \t]-a[ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "ldap-w", keywords: []string{"ldap"},
		pattern: `\b(?:ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn))\b` + cliRest,
		inner:   `[ \t]-w[ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "snmp-auth", keywords: []string{"snmp"},
		pattern: `\b(?:snmp\w*)\b` + cliRest,
		inner:   `[ \t]-[AXc][ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "ssh-keygen-passphrase", keywords: []string{"ssh-keygen"},
		pattern: `\b(?:ssh-keygen)\b` + cliRest,
		inner:   `[ \t]-[NP][ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "openssl-k", keywords: []string{"openssl"},
		pattern: `\b(?:openssl)\b` + cliRest,
		inner:   `[ \t]-k[ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id: "doctl-t", keywords: []string{"doctl"},
		pattern: `\b(?:doctl)\b` + cliRest,
		inner:   `[ \t]-t[ \t]+` + cliVal,
		back:    128, fwd: 512, groups: []int{1},
	},
	{
		id:       "smb-user-percent",
		keywords: []string{"smb", "rpcclient", "mount.cifs"},
		pattern:  `\b(?:smbclient|rpcclient|smbmap|smbget|smbcacls|mount\.cifs)\b` + cliRest,
		inner:    `(?:-U|--user(?:name)?)[ \t=]*['"]?[^\s%'"]+%` + cliAttached,
		back:     1, fwd: 512, groups: []int{1},
	},
	{
		id:       "lftp-user-comma",
		keywords: []string{"lftp"},
		pattern:  `\blftp\b` + cliRest,
		inner:    `[ \t]-u[ \t]+['"]?[^\s,'"]+,` + cliAttached,
		back:     1, fwd: 512, groups: []int{1},
	},
	{
		id:       "http-client-user",
		keywords: []string{"curl", "wget", "http ", "https ", "xh "},
		pattern:  `\b(?:curl|wget|http|https|xh|xhs)\b` + cliRest,
		inner: `[ \t](?:-u|--user|-a|--auth|--proxy-user)(?:[ \t]+|=)?` +
			`(?:'[^':\n]*:([^'\n]+)'|"[^":\n]*:([^"\n]+)"|[^\s'":;|&]*:([^\s'";|&]+))`,
		back: 1, fwd: 512, groups: []int{1, 2, 3},
	},
	{
		id:       "echo-to-stdin",
		keywords: []string{"-stdin", "with-token", "passwd", "sudo"},
		pattern: `(?:\becho|\bprintf)[ \t]+(?:-[neE]+[ \t]+)?('[^'\n]+'|"[^"\n]+"|[^\s'"|;&]+)[ \t]*\|` + `[^\n|()]*` +
			`(?:--password-stdin|--with-token|--token-stdin|--stdin\b|\bchpasswd\b|\bpasswd\b|\bsudo[ \t]+(?:-[A-Za-z]+[ \t]+)*-[A-Za-z]*S\b)`,
		back: 512, fwd: 16, groups: []int{1},
		check: func(v string) bool {
			v = strings.Trim(v, `'"`)
			return hasAlnum(v) && v[0] != '$' && !strings.Contains(v, "%s")
		},
	},
	{
		id:       "here-string-stdin",
		keywords: []string{"-stdin", "with-token", "sudo"},
		pattern:  `(?:--password-stdin|--with-token|--token-stdin|--stdin|\bsudo[ \t][^\n<]*-S)\b[^\n<]*<<<[ \t]*` + cliAttached,
		back:     16, fwd: 256, groups: []int{1},
		check: func(v string) bool { v = strings.Trim(v, `'"`); return hasAlnum(v) && v[0] != '$' },
	},
	{
		id:       "expect-send-password",
		keywords: []string{"expect"},
		// An expect script answering a password prompt: the send after it.
		pattern: `(?i)\bexpect[ \t]+(?:-\w+[ \t]+)*"[^"\n]*(?:assword|passphrase|passcode)[^"\n]*"[ \t;{}\r\n]*send[ \t]+(?:-\w+[ \t]+)*"([^"\\\n]+)`,
		back:    1, fwd: 512, groups: []int{1},
		check: func(v string) bool { return hasAlnum(v) && v[0] != '$' },
	},
	{
		id:       "powershell-securestring",
		keywords: []string{"convertto-securestring"},
		pattern:  `(?i)\bConvertTo-SecureString[ \t]+(?:-String[ \t]+)?('[^'\n]+'|"[^"\n]+")`,
		back:     1, fwd: 256, groups: []int{1},
		check: func(v string) bool { v = strings.Trim(v, `'"`); return hasAlnum(v) && v[0] != '$' },
	},
	{
		id:       "openssl-passwd",
		keywords: []string{"openssl passwd"},
		// openssl passwd hashes the password it is given as an argument.
		pattern: `\bopenssl[ \t]+passwd((?:[ \t]+-(?:salt[ \t]+\S+|\w+))*)[ \t]+('[^'\n]+'|"[^"\n]+"|[^\s'"\-$][^\s'";|&)]*)`,
		back:    1, fwd: 256, groups: []int{2},
		check: func(v string) bool { v = strings.Trim(v, `'"`); return hasAlnum(v) && v[0] != '$' },
	},
	{
		id:       "openssl-pass-arg",
		keywords: []string{"pass:"},
		pattern:  `\bpass:` + cliAttached,
		back:     1, fwd: 256, groups: []int{1},
	},
	{
		id:       "positional-login",
		keywords: []string{"vault", "cargo", "wpa_passphrase", "rabbitmqctl", "cf auth"},
		pattern: `(?m)\b(?:vault[ \t]+login|cargo[ \t]+login)[ \t]+(?:-[\w-]+(?:=\S+)?[ \t]+)*([^\s=\-][^\s=;|&]{7,})(?:[ \t;|&]|$)` +
			`|\b(?:wpa_passphrase|cf[ \t]+auth|rabbitmqctl[ \t]+(?:add_user|change_password|authenticate_user))[ \t]+\S+[ \t]+` + cliVal,
		back: 1, fwd: 512, groups: []int{1, 2},
	},
	{
		id:       "oracle-user-slash",
		keywords: []string{"sqlplus", "sqlldr", "expdp", "impdp", "rman"},
		pattern:  `\b(?:sqlplus|sqlldr|expdp|impdp|rman)\b[ \t]+(?:-\S+[ \t]+)*['"]?[\w$#.\-]+/([^\s@'"/]+)`,
		back:     1, fwd: 512, groups: []int{1},
	},
	{
		id:       "net-use",
		keywords: []string{"net use", "net user"},
		pattern:  `(?i)\bnet[ \t]+use[ \t]+(?:[a-z]:[ \t]+)?\\\\\S+[ \t]+([^\s/'"*\\][^\s'"]*)[ \t]+/u(?:ser)?:|\bnet[ \t]+user[ \t]+\S+[ \t]+([^\s/'"*][^\s'"]*)[ \t]+/(?:add|y)\b`,
		back:     1, fwd: 512, groups: []int{1, 2},
	},
	{
		id:       "nmcli-psk",
		keywords: []string{"nmcli"},
		pattern:  `\bnmcli\b` + cliRest,
		inner:    `[ \t](?:password|wifi-sec\.psk|802-1x\.password)[ \t]+` + cliVal,
		back:     1, fwd: 512, groups: []int{1},
	},
	{
		id:       "config-set",
		keywords: []string{"config", "configure"},
		scan:     scanConfigSet,
	},
	{
		id: "secrets-set",
		keywords: []string{"secret set", "secrets set", "secrets:set", "secret:set", "env:set", "env set", "variables set",
			"variables:set", "vars set", "config:set", "secret put", "secrets put"},
		scan: scanSecretsSet,
	},
	{
		id:       "kubectl-from-literal",
		keywords: []string{"from-literal"},
		scan:     scanFromLiteral,
	},
}

// cliTokens splits the rest of the line at j into blank-separated tokens
// (a quoted token may hold blanks), at most max of them, stopping at a
// command separator.
func cliTokens(s string, j, max int) []span {
	var out []span
	for len(out) < max {
		j = skipBlanks(s, j)
		if j >= len(s) || strings.IndexByte("\n\r;|&<>(", s[j]) >= 0 {
			break // a separator, or a subshell or a card's "(description)"
		}
		e := j
		for e < len(s) && !isSpace(s[e]) && s[e] != ';' && s[e] != '|' && s[e] != '&' {
			if s[e] == '\'' || s[e] == '"' {
				if k := strings.IndexByte(s[e+1:], s[e]); k >= 0 && !strings.ContainsAny(s[e+1:e+1+k], "\n") {
					e += k + 2
					continue
				}
			}
			e++
		}
		if e == j {
			break
		}
		out = append(out, span{j, e})
		j = e
	}
	return out
}

// unquote drops the quotes around a token span.
func unquote(s string, sp span) span {
	if sp.end-sp.start >= 2 && (s[sp.start] == '\'' || s[sp.start] == '"') && s[sp.end-1] == s[sp.start] {
		return span{sp.start + 1, sp.end - 1}
	}
	return sp
}

// scanConfigSet reads "config [set] [flags] NAME VALUE" (aws configure set,
// npm/yarn/pnpm/git/poetry/pip config): the value after the first name that
// names a credential.
func scanConfigSet(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && keyByte(s[i-1]) || i+k < len(s) && s[i+k] != ' ' && s[i+k] != '\t' && s[i+k] != ':' {
		return nil
	}
	ts := cliTokens(s, i+k, 10)
	for n, t := range ts {
		name := s[t.start:t.end]
		if name[0] == '-' || strings.Contains(name, "=") || name == "set" {
			continue
		}
		if classifyKey(name) == strongCred && n+1 < len(ts) {
			v := unquote(s, ts[n+1])
			if val := s[v.start:v.end]; val != "" && val[0] != '-' && !placeholder(s, name, v, v != ts[n+1]) {
				return []span{v}
			}
		}
	}
	return nil
}

// scanSecretsSet reads "secrets set NAME VALUE", "secrets set K=V ...",
// "config:set K=V" and "secret set NAME --body V": every value is a secret.
func scanSecretsSet(s string, i, k int, _ *compiledRule) []span {
	var out []span
	ts := cliTokens(s, i+k, 24)
	positional := 0
	for n := 0; n < len(ts); n++ {
		t := s[ts[n].start:ts[n].end]
		switch {
		case t == "--body" || t == "-b" || t == "--value":
			if n+1 < len(ts) {
				out = append(out, unquote(s, ts[n+1]))
				n++
			}
		case strings.HasPrefix(t, "--body=") || strings.HasPrefix(t, "--value="):
			eq := strings.IndexByte(t, '=')
			out = append(out, unquote(s, span{ts[n].start + eq + 1, ts[n].end}))
		case t[0] == '-':
		case strings.Contains(t, "="):
			eq := strings.IndexByte(t, '=')
			if v := unquote(s, span{ts[n].start + eq + 1, ts[n].end}); v.end > v.start {
				out = append(out, v)
			}
		default:
			positional++
			if positional == 2 {
				out = append(out, unquote(s, ts[n]))
			}
		}
	}
	return out
}

// scanFromLiteral redacts the value of --from-literal=KEY=VALUE on a line
// that creates a secret.
func scanFromLiteral(s string, i, k int, _ *compiledRule) []span {
	ls := lineStart(s, i)
	if !strings.Contains(s[ls:i], "secret") {
		return nil
	}
	j := i + k
	if j < len(s) && (s[j] == '=' || s[j] == ' ') {
		j++
	}
	ts := cliTokens(s, j, 1)
	if len(ts) == 0 {
		return nil
	}
	t := unquote(s, ts[0])
	eq := strings.IndexByte(s[t.start:t.end], '=')
	if eq < 0 || t.start+eq+1 >= t.end {
		return nil
	}
	return []span{unquote(s, span{t.start + eq + 1, t.end})}
}
