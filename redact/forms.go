package redact

import "strings"

// FormField is what a form request (an MCP elicitation's requested schema,
// an AEP-0006 field_spec) says about one field: enough to judge whether its
// answer is a secret without keeping the request's words.
type FormField struct {
	ID          string // the field id: the schema's property name
	Type        string // string, number, boolean or select
	Title       string // the field's label
	Description string
	Format      string // the schema's format ("password" in OpenAPI)
	WriteOnly   bool   // the schema's writeOnly: never echoed back
}

// formWords are segments that make a form field's name or words say it
// holds a secret, beyond what CredentialKey accepts.
const formWords wordSet = "pin otp totp hotp mfa 2fa cvv cvc cvn ssn passcode passphrase " +
	"password passwd secret token credential credentials creds apikey"

// formCompounds are adjacent-segment spellings of secrets: a one-time
// code, a card's security code, an API key.
var formCompounds = [...]string{
	"onetime", "securitycode", "verificationcode", "authcode", "authenticationcode",
	"confirmationcode", "smscode", "twofactor", "cardnumber", "creditcard", "apikey",
	"accesskey", "privatekey", "secretkey", "recoverycode", "backupcode", "seedphrase",
	"socialsecurity", "secretanswer", "securityanswer", "securityquestion", "licensekey", "licencekey",
	"productkey", "serialkey", "activationkey", "activationcode", "registrationkey",
}

// secretFormats are schema formats that mark a secret.
const secretFormats wordSet = "password secret pin otp credential"

// secretWords reports whether a name or a piece of prose says it holds a
// secret: a word such as password, PIN, OTP, token, passphrase, or a
// compound such as "one-time code", "security code", "API key".
func secretWords(text string, login bool) bool {
	segs := nameSegments(text)
	if len(segs) == 0 || descriptors.has(segs[len(segs)-1]) {
		return false // "token_count", "pin_length" describe a secret
	}
	for i, s := range segs {
		if formWords.has(s) || (login && s == "login") {
			return true
		}
		if i+1 < len(segs) {
			pair := s + segs[i+1]
			for _, c := range formCompounds {
				if strings.HasPrefix(pair, c) || (i+2 < len(segs) && strings.HasPrefix(pair+segs[i+2], c)) {
					return true
				}
			}
		}
	}
	norm := strings.Join(segs, "")
	for _, c := range formCompounds {
		if norm == c || strings.HasSuffix(norm, c) {
			return true
		}
	}
	return false
}

// formSecretName reports whether a form answer's key (a field id) names a
// secret: what CredentialKey accepts, and pin, otp, one_time_code,
// db_login, secret_answer and their kin.
func formSecretName(id string) bool {
	return CredentialKey(id) || secretWords(id, true)
}

// proseSecret reports whether an object key written as prose (an
// AskUserQuestion answer is keyed by its question) asks for a secret.
func proseSecret(k string) bool {
	return strings.ContainsAny(k, " ?") && secretWords(k, false)
}

// SecretFields returns the ids of the fields whose answers are secrets,
// judged by what each field says it holds: its schema (writeOnly, a
// password format), its name, its label and description, and, for a form's
// only free-text field, the request's own prompt ("Enter the one-time code
// we sent"). Choice and boolean fields are structural and never secret.
func SecretFields(prompt string, fields []FormField) []string {
	var out []string
	free := 0
	for _, f := range fields {
		if f.Type != "select" && f.Type != "boolean" {
			free++
		}
	}
	for _, f := range fields {
		if f.Type == "select" || f.Type == "boolean" {
			continue
		}
		if f.WriteOnly || secretFormats.has(strings.ToLower(f.Format)) || formSecretName(f.ID) ||
			secretWords(f.Title, true) || secretWords(f.Description, false) || (free == 1 && secretWords(prompt, false)) {
			out = append(out, f.ID)
		}
	}
	return out
}
