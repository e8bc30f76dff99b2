package redact

import "strings"

// This file judges the output of a command by what the command does: `gh
// auth token`, `vault kv get -field=password`, `aws configure get
// aws_secret_access_key`, `openssl rand -hex 32`, `printenv STRIPE_KEY`
// print a secret whatever its shape, so the lines a terminal shows after
// them are secrets too, a long hex string or a plain word included.

// secretPrinters are the commands whose output is a credential, each as the
// words it starts with. A command that prints a value only with a flag
// names the flag after a '+' ("security find-generic-password +-w": the
// keychain prints the password only with -w). A phrase printer's first
// line is taken whole, blanks included (`pass show` prints a password
// line that may hold words).
var secretPrinters = [...]struct {
	words  string
	needs  string // a flag the command line must hold; "" for none
	phrase bool
}{
	{words: "gh auth token"},
	{words: "glab auth token"},
	{words: "gcloud auth print-access-token"},
	{words: "gcloud auth print-identity-token"},
	{words: "gcloud auth application-default print-access-token"},
	{words: "az account get-access-token"},
	{words: "aws ecr get-login-password"},
	{words: "aws ecr-public get-login-password"},
	{words: "aws configure get"},
	{words: "aws secretsmanager get-secret-value"},
	{words: "aws ssm get-parameter"},
	{words: "aws ssm get-parameters"},
	{words: "vault kv get", needs: "-field"},
	{words: "vault read", needs: "-field"},
	{words: "vault print token"},
	{words: "op read"},
	{words: "op item get", needs: "--fields"},
	{words: "pass show", phrase: true},
	{words: "gopass show", phrase: true},
	{words: "bw get password", phrase: true},
	{words: "bw get totp"},
	{words: "lpass show", needs: "--password", phrase: true},
	{words: "security find-generic-password", needs: "-w", phrase: true},
	{words: "security find-internet-password", needs: "-w", phrase: true},
	{words: "secret-tool lookup", phrase: true},
	{words: "keyring get", phrase: true},
	{words: "heroku auth:token"},
	{words: "doppler secrets get", needs: "--plain"},
	{words: "kubectl create token"},
	{words: "kubectl get secret", needs: "jsonpath"},
	{words: "kubectl get secrets", needs: "jsonpath"},
	{words: "openssl rand"},
	{words: "pwgen"},
	{words: "rails secret"},
	{words: "bin/rails secret"},
	{words: "rake secret"},
	{words: "mix phx.gen.secret"},
	{words: "php artisan key:generate", needs: "--show"},
}

// scanSecretPrinter redacts the output of a command that prints a secret
// (see secretPrinters), and of `printenv NAME` and `echo $NAME` when the
// name says it holds a credential: each following line that holds one
// token, up to the next prompt or a blank line.
func scanSecretPrinter(s string, i, k int, _ *compiledRule) []span {
	if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '_' || s[i-1] == '-' || s[i-1] == '.') || !commandStart(s, i) {
		return nil
	}
	le := lineEnd(s, i)
	words := cliTokens(s, i, 12)
	for len(words) > 0 && words[len(words)-1].end > le {
		words = words[:len(words)-1]
	}
	word := func(n int) string {
		if n >= len(words) {
			return ""
		}
		u := unquote(s, words[n])
		return s[u.start:u.end]
	}
	phrase := false
	switch cmd := word(0); cmd {
	case "printenv", "echo":
		if !printsCredential(cmd, word(1), len(words)) {
			return nil
		}
	default:
		found := false
		line := s[i:le]
		for _, p := range secretPrinters {
			ws := strings.Fields(p.words)
			match := true
			for n := 0; n < len(ws) && match; n++ {
				match = strings.EqualFold(ws[n], word(n))
			}
			if match && (p.needs == "" || strings.Contains(line, p.needs)) {
				found, phrase = true, p.phrase
				break
			}
		}
		if !found {
			return nil
		}
	}
	var out []span
	nextLines(s, le, func(n, st, t int) bool {
		line := s[st:t]
		if line == "" || promptLine(line) || strings.HasPrefix(line, "-----") {
			return false
		}
		if (!strings.ContainsAny(line, " \t") || phrase && n == 0) && len(line) >= 4 && !placeholderWord(line) {
			out = append(out, span{st, t})
		}
		return true
	})
	return out
}

// printsCredential reports whether `printenv NAME` or `echo $NAME` (the
// command's only argument) prints a variable whose name says it holds a
// credential.
func printsCredential(cmd, arg string, args int) bool {
	if args != 2 {
		return false
	}
	if cmd == "echo" {
		v, ok := strings.CutPrefix(arg, "$")
		if !ok {
			return false
		}
		arg = strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
	}
	for i := 0; i < len(arg); i++ {
		if !isAlnum(arg[i]) && arg[i] != '_' {
			return false
		}
	}
	return arg != "" && CredentialKey(arg)
}
