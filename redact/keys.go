package redact

import "strings"

// keyClass is how strongly a name says that what it names is a credential.
type keyClass uint8

const (
	notCred keyClass = iota
	// weakCred names may hold a credential ("cache_key", "auth_mode",
	// "token_type", "api_version"): their value is one only when it looks
	// random.
	weakCred
	// strongCred names hold a credential ("password", "GITHUB_TOKEN",
	// "SECRET_KEY_BASE", "MY_SERVICE_CRED"): any real value is one.
	strongCred
)

// strongSuffixes are the endings of a normalized name (lower case, the
// separators '_', '-', '.', ' ' removed) that make it credential-bearing:
// password, client_secret, X-Api-Key, aws_secret_access_key, refreshToken.
var strongSuffixes = [...]string{
	"password", "passwd", "passphrase", "passcode", "secret", "secrets", "token",
	"apikey", "apikeys", "accesskey", "secretkey", "privatekey", "signingkey",
	"encryptionkey", "masterkey", "accountkey", "authkey",
	"credential", "credentials", "cred", "creds", "authorization", "auth", "cookie",
	"onetimecode", "onetimepassword", "secretanswer", "securityanswer", "recoverycode",
	"backupcode", "seedphrase", "mnemonic", "licensekey", "licencekey", "productkey", "serialkey",
	"activationkey", "activationcode", "registrationkey", "keydata",
}

// strongLast are whole last segments that mark a credential ("db_pass",
// "GITHUB_PAT", "DB_PWD", "otp") but would over-match as suffixes
// ("bypass", "compass"); true marks those that do so only after another
// segment ("PWD" alone is the working directory, "PASS:" a test result).
const (
	strongLastAlone wordSet = "otp totp 2fa"
	strongLastAfter wordSet = "pass pw pwd pat mfa"
)

// strongWords are segments that make a name credential-bearing wherever
// they stand ("SECRET_KEY_BASE", "mySecretString", "db_password_prod"),
// unless the last segment describes rather than holds (see descriptors).
const strongWords wordSet = "password passwd passphrase passcode secret secrets token credential " +
	"credentials creds cred apikey privatekey"

// weakWords are segments that make a name possibly credential-bearing.
const weakWords wordSet = "key keys access auth api session sig signature salt hmac private cert " +
	"license bearer jwt sid tokens oauth login pin pass pw"

// descriptors are last segments that describe a credential rather than
// hold one: "secret_name", "password_file", "token_type", "token_count".
const descriptors wordSet = "name names file files path paths dir type types count counts length id identifier " +
	"len size url uri endpoint ref refs arn env var vars prefix suffix " +
	"hint format field fields label header param policy rotation ttl " +
	"expiry expires expiration expiresat lifetime version enabled required " +
	"mode provider store manager source location kind schema status limit " +
	"min max regex pattern placeholder description desc help message msg " +
	"error usage budget template validator strength reset changed updated " +
	"created at ids tokenizer index idx position pos offset start end in " +
	"out used remaining estimate stdin command cmd helper prompt"

// fileExts are the endings after a name's last '.' that make it a file
// name: TokenService.java:88 is a source position, not a token.
const fileExts wordSet = "java go py js ts tsx jsx rb rs c h cc cpp cs kt swift php scala sh " +
	"yaml yml json toml xml txt md html css lock log"

// wordSet is a set of words written as one space-separated string: a
// constant, so the sets cost no package initialisation in every hook
// process.
type wordSet string

// maxSetWord is the longest word any wordSet holds (TestWordSets checks
// it).
const maxSetWord = 16

// has reports whether w is one of the set's words.
func (ws wordSet) has(w string) bool {
	if len(w) > maxSetWord || strings.IndexByte(w, ' ') >= 0 {
		return false // no set holds a word this long: most values asked about are tokens
	}
	s := string(ws)
	for off := 0; w != ""; {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return false
		}
		st, en := off+i, off+i+len(w)
		if (st == 0 || s[st-1] == ' ') && (en == len(s) || s[en] == ' ') {
			return true
		}
		off = st + 1
	}
	return false
}

// nameSegments splits a name into lower-case segments at separators
// ('_', '-', '.', ' ', '/', ':') and camelCase boundaries ("refreshToken",
// "XApiKey", "APIKey"), at most 32 segments of the last 128 bytes.
func nameSegments(name string) []string {
	if len(name) > 128 {
		name = name[len(name)-128:]
	}
	var segs []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start && len(segs) < 32 {
			segs = append(segs, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	upper := func(c byte) bool { return c >= 'A' && c <= 'Z' }
	lowerCase := func(c byte) bool { return c >= 'a' && c <= 'z' }
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case !isAlnum(c):
			flush(i)
			continue
		case start >= 0 && upper(c) && lowerCase(name[i-1]):
			flush(i) // fooBar, but 2FA stays whole
		case start >= 0 && upper(c) && upper(name[i-1]) && i+1 < len(name) && name[i+1] >= 'a' && name[i+1] <= 'z':
			flush(i) // APIKey
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(name))
	return segs
}

// classifyKey judges a name (an object key, an assignment's left side, a
// flag, an environment variable) by what it says it holds.
func classifyKey(name string) keyClass {
	segs := nameSegments(name)
	if len(segs) == 0 {
		return notCred
	}
	for len(segs) > 1 && isDigits(segs[len(segs)-1]) {
		segs = segs[:len(segs)-1] // Key-File-3, token_2: a version or an index
	}
	norm := strings.Join(segs, "")
	last := segs[len(segs)-1]
	for _, s := range strongSuffixes {
		if strings.HasSuffix(norm, s) {
			if s == "auth" && last == "oauth" {
				return weakCred
			}
			return strongCred
		}
	}
	if strongLastAlone.has(last) || strongLastAfter.has(last) && len(segs) > 1 {
		return strongCred
	}
	class := notCred
	for i, s := range segs {
		if strongWords.has(s) || (s == "api" && i+1 < len(segs) && segs[i+1] == "key") ||
			(s == "private" && i+1 < len(segs) && segs[i+1] == "key") {
			class = strongCred
			break
		}
		if weakWords.has(s) {
			class = weakCred
		}
	}
	dot := strings.LastIndexByte(name, '.')
	if class > notCred && (descriptors.has(last) || dot > 0 && fileExts.has(strings.ToLower(name[dot+1:]))) {
		class-- // "token_type", "secret_name", "api_version" describe, not hold
	}
	return class
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// CredentialKey reports whether an object key or assignment name names a
// credential, in any spelling: "password", "aws_secret_access_key",
// "X-Api-Key", "client_secret", "refreshToken", "SECRET_KEY_BASE",
// "MY_SERVICE_CRED", "GITHUB_PAT", "DB_PWD". Counting and descriptive names
// such as "max_tokens", "tokenizer", "token_type" or "secret_name" are not
// credentials.
func CredentialKey(name string) bool { return classifyKey(name) == strongCred }
