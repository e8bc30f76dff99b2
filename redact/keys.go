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
	"encryptionkey", "masterkey", "accountkey", "authkey", "sessionkey",
	"credential", "credentials", "cred", "creds", "authorization", "auth", "cookie",
	"onetimecode", "onetimepassword", "secretanswer", "securityanswer", "recoverycode",
	"backupcode", "seedphrase", "mnemonic",
}

// strongLast are whole last segments that mark a credential ("db_pass",
// "GITHUB_PAT", "DB_PWD", "otp") but would over-match as suffixes
// ("bypass", "compass"); true marks those that do so only after another
// segment ("PWD" alone is the working directory, "PASS:" a test result).
var strongLast = map[string]bool{"pass": true, "pw": true, "pwd": true, "pat": true, "otp": false, "totp": false, "mfa": true, "2fa": false}

// strongWords are segments that make a name credential-bearing wherever
// they stand ("SECRET_KEY_BASE", "mySecretString", "db_password_prod"),
// unless the last segment describes rather than holds (see descriptors).
var strongWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "passcode": true, "secret": true,
	"secrets": true, "token": true, "credential": true, "credentials": true, "creds": true,
	"cred": true, "apikey": true, "privatekey": true,
}

// weakWords are segments that make a name possibly credential-bearing.
var weakWords = map[string]bool{
	"key": true, "keys": true, "access": true, "auth": true, "api": true, "session": true,
	"sig": true, "signature": true, "salt": true, "hmac": true, "private": true, "cert": true,
	"license": true, "bearer": true, "jwt": true, "sid": true, "tokens": true, "oauth": true,
	"login": true, "pin": true, "pass": true, "pw": true,
}

// descriptors are last segments that describe a credential rather than
// hold one: "secret_name", "password_file", "token_type", "token_count".
var descriptors = map[string]bool{
	"name": true, "names": true, "file": true, "files": true, "path": true, "paths": true,
	"dir": true, "type": true, "types": true, "count": true, "counts": true, "length": true,
	"len": true, "size": true, "url": true, "uri": true, "endpoint": true, "ref": true,
	"refs": true, "arn": true, "env": true, "var": true, "vars": true, "prefix": true,
	"suffix": true, "hint": true, "format": true, "field": true, "fields": true,
	"label": true, "header": true, "param": true, "policy": true, "rotation": true,
	"ttl": true, "expiry": true, "expires": true, "expiration": true, "expiresat": true,
	"lifetime": true, "version": true, "enabled": true, "required": true, "mode": true,
	"provider": true, "store": true, "manager": true, "source": true, "location": true,
	"kind": true, "schema": true, "status": true, "limit": true, "min": true, "max": true,
	"regex": true, "pattern": true, "placeholder": true, "description": true, "desc": true,
	"help": true, "message": true, "msg": true, "error": true, "usage": true, "budget": true,
	"template": true, "validator": true, "strength": true, "reset": true, "changed": true,
	"updated": true, "created": true, "at": true, "ids": true, "tokenizer": true,
	"index": true, "idx": true, "position": true, "pos": true, "offset": true, "start": true,
	"end": true, "in": true, "out": true, "used": true, "remaining": true, "estimate": true,
	"stdin": true, "command": true, "cmd": true, "helper": true, "prompt": true,
}

// fileExts are the endings after a name's last '.' that make it a file
// name: TokenService.java:88 is a source position, not a token.
var fileExts = map[string]bool{
	"java": true, "go": true, "py": true, "js": true, "ts": true, "tsx": true, "jsx": true,
	"rb": true, "rs": true, "c": true, "h": true, "cc": true, "cpp": true, "cs": true,
	"kt": true, "swift": true, "php": true, "scala": true, "sh": true, "yaml": true,
	"yml": true, "json": true, "toml": true, "xml": true, "txt": true, "md": true,
	"html": true, "css": true, "lock": true, "log": true,
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
	if needPrefix, ok := strongLast[last]; ok && (!needPrefix || len(segs) > 1) {
		return strongCred
	}
	class := notCred
	for i, s := range segs {
		if strongWords[s] || (s == "api" && i+1 < len(segs) && segs[i+1] == "key") ||
			(s == "private" && i+1 < len(segs) && segs[i+1] == "key") {
			class = strongCred
			break
		}
		if weakWords[s] {
			class = weakCred
		}
	}
	dot := strings.LastIndexByte(name, '.')
	if class > notCred && (descriptors[last] || dot > 0 && fileExts[strings.ToLower(name[dot+1:])]) {
		class-- // "token_type", "secret_name", "api_version" describe, not hold
	}
	return class
}

// CredentialKey reports whether an object key or assignment name names a
// credential, in any spelling: "password", "aws_secret_access_key",
// "X-Api-Key", "client_secret", "refreshToken", "SECRET_KEY_BASE",
// "MY_SERVICE_CRED", "GITHUB_PAT", "DB_PWD". Counting and descriptive names
// such as "max_tokens", "tokenizer", "token_type" or "secret_name" are not
// credentials.
func CredentialKey(name string) bool { return classifyKey(name) == strongCred }
