package redact

import "strings"

// credSuffixes are the endings (after lower-casing and removing '_', '-',
// '.' and spaces) that make a key name credential-bearing: password,
// client_secret, X-Api-Key, aws_secret_access_key, refreshToken ...
var credSuffixes = [...]string{
	"password", "passwd", "passphrase", "secret", "secrets", "token",
	"apikey", "accesskey", "secretkey", "privatekey", "signingkey",
	"encryptionkey", "masterkey", "accountkey", "credential", "credentials",
	"authorization", "auth", "cookie", "sessionkey",
}

// credSegments are whole trailing name segments that mark a credential
// ("db_pass") but would over-match as suffixes ("bypass").
var credSegments = [...]string{"pass", "pw"}

// CredentialKey reports whether an object key or assignment name names a
// credential, in any spelling: "password", "aws_secret_access_key",
// "X-Api-Key", "client_secret", "refreshToken". Counting and descriptive
// names such as "max_tokens", "tokenizer", "token_type" or "secret_name" are
// not credentials.
func CredentialKey(name string) bool {
	if len(name) > 128 {
		name = name[len(name)-128:]
	}
	var b [128]byte
	n := 0
	segStart := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == '_' || c == '-' || c == '.' || c == ' ':
			segStart = n
			continue
		}
		b[n] = c
		n++
	}
	norm := string(b[:n])
	for _, s := range credSuffixes {
		if strings.HasSuffix(norm, s) {
			return true
		}
	}
	last := norm[segStart:]
	for _, s := range credSegments {
		if last == s {
			return true
		}
	}
	return false
}
