package auth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// MinToken is the shortest token accepted: a guessable token is no
// authentication.
const MinToken = 16

// maxFile bounds the tokens file.
const maxFile = 4 << 20

// Tokens is the loaded tokens file: secrets kept only as digests and
// compared in constant time.
type Tokens struct {
	set    guard.Tokens[*Grant]
	grants []*Grant
	// signIn is the first consumer token, kept for the console's sign-in
	// URL the relay prints at start: the one secret held in the clear.
	signIn      string
	signInGrant *Grant
	// user marks the default identity (User), not a tokens file.
	user bool
}

// UserOnly reports the default identity: the user's own token alone.
func (t *Tokens) UserOnly() bool { return t.user }

// Lookup returns the grant of a presented token.
func (t *Tokens) Lookup(secret string) (*Grant, bool) { return t.set.Lookup(secret) }

// Grants lists the grants in file order (no secrets).
func (t *Tokens) Grants() []*Grant { return t.grants }

// SignIn is the first consumer token of the file and its grant, for the
// fleet console's sign-in URL (/?access_token=TOKEN) the relay prints to
// the terminal that started it; "" when the file holds no consumer token.
func (t *Tokens) SignIn() (string, *Grant) { return t.signIn, t.signInGrant }

// Load reads a tokens file, refusing one that is a link, not a regular
// file, or readable by group or others (a token another local user can
// read is not a secret). Errors name the line, never a token.
func Load(path string) (*Tokens, error) {
	f, err := guard.OpenSecretFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokens file: %w", err)
	}
	defer f.Close()
	t, err := Parse(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("tokens file %s: %w", path, err)
	}
	return t, nil
}

// entry is one line of the tokens file.
type entry struct {
	Token    string   `json:"token"`
	Identity string   `json:"identity"`
	Scopes   []string `json:"scopes"`
	Tenant   string   `json:"tenant"`
	Capture  string   `json:"capture"`
}

// Parse reads tokens-file lines: one JSON object each; blank lines and
// lines starting with # are skipped.
func Parse(r io.Reader) (*Tokens, error) {
	t := &Tokens{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxFile)
	seen := map[string]int{}
	total := 0
	for n := 1; sc.Scan(); n++ {
		total += len(sc.Bytes()) + 1
		if total > maxFile {
			return nil, fmt.Errorf("larger than %d bytes", maxFile)
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var e entry
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("line %d: not a token entry: %s", n, jsonProblem(err))
		}
		g, err := e.grant()
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if first, dup := seen[e.Token]; dup {
			return nil, fmt.Errorf("line %d: the same token as line %d", n, first)
		}
		seen[e.Token] = n
		t.set.Add(e.Token, g)
		if g.Kind == Consumer && t.signIn == "" {
			t.signIn, t.signInGrant = e.Token, g
		}
		t.grants = append(t.grants, g)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.grants) == 0 {
		return nil, errors.New("no tokens")
	}
	return t, nil
}

// jsonProblem describes a decoding error without quoting the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("JSON syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s must be a %s", te.Field, te.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ") + " (known: token, identity, scopes, tenant, capture)"
	}
	return "not a JSON object"
}

func (e entry) grant() (*Grant, error) {
	if len(e.Token) < MinToken {
		return nil, fmt.Errorf("token shorter than %d characters", MinToken)
	}
	for i := 0; i < len(e.Token); i++ {
		if c := e.Token[i]; c <= ' ' || c == 0x7f {
			return nil, errors.New("token holds a blank or control character")
		}
	}
	g := &Grant{Identity: e.Identity, Capture: redact.Full}
	kind, rest, _ := strings.Cut(e.Identity, ":")
	switch kind {
	case "consumer":
		if !ValidName(rest) {
			return nil, fmt.Errorf("identity %s: consumer:NAME, NAME of [A-Za-z0-9._@-]", quote(e.Identity))
		}
		g.Kind, g.Name = Consumer, rest
	case "emitter":
		host, agent, ok := strings.Cut(rest, "/")
		if !ok || host == "" || agent == "" || strings.Contains(agent, "/") {
			return nil, fmt.Errorf("identity %s: emitter:HOST/AGENT", quote(e.Identity))
		}
		g.Kind, g.Host, g.Agent = Emitter, host, agent
	default:
		return nil, fmt.Errorf("identity %s: consumer:NAME or emitter:HOST/AGENT", quote(e.Identity))
	}
	for _, s := range e.Scopes {
		kind, pat, ok := strings.Cut(s, ":")
		if !ok || pat == "" {
			return nil, fmt.Errorf("scope %s: KIND:GLOB (subscribe, read, write, control)", quote(s))
		}
		switch kind {
		case "subscribe":
			g.Subscribe = append(g.Subscribe, pat)
		case "read":
			g.Read = append(g.Read, pat)
		case "write":
			g.Write = append(g.Write, pat)
		case "control":
			g.Control = append(g.Control, pat)
		default:
			return nil, fmt.Errorf("scope %s: unknown kind %s (subscribe, read, write, control)", quote(s), quote(kind))
		}
	}
	if e.Tenant != "" && e.Tenant != AllTenants {
		if err := shim.ValidTenant(e.Tenant); err != nil {
			return nil, fmt.Errorf("tenant: %w", err)
		}
	}
	g.Tenant = e.Tenant
	if e.Capture != "" {
		l, err := redact.ParseLevel(e.Capture)
		if err != nil {
			return nil, fmt.Errorf("capture: %w", err)
		}
		g.Capture = l
	}
	return g, nil
}

// ValidName reports whether s may name an identity's agent or host: 1 to
// 128 of [A-Za-z0-9._@-].
func ValidName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '@') {
			return false
		}
	}
	return true
}

// User is the relay's default identity when it has no tokens file: the
// one token of the user who runs it (the per-user token every aep-hook
// listener of theirs accepts, kept 0600 in $AEP_HOME/token), speaking as
// consumer:NAME with every scope. Whoever can read that file already owns
// the record the relay serves, so the token watches, writes as any of the
// user's agents, and answers them over control; any other request is
// refused. Its tenant is every tenant's: the user's own logs may carry any
// AEP_TENANT their hooks were given. name is the user's login name
// (anything outside ValidName becomes "local").
func User(secret, name string) (*Tokens, error) {
	if len(secret) < MinToken {
		return nil, fmt.Errorf("the user token is shorter than %d characters", MinToken)
	}
	for i := 0; i < len(secret); i++ {
		if c := secret[i]; c <= ' ' || c == 0x7f {
			return nil, errors.New("the user token holds a blank or control character")
		}
	}
	g := &Grant{Kind: Consumer, Capture: redact.Full}
	if !ValidName(name) {
		name = "local"
	}
	g.Identity, g.Name = "consumer:"+name, name
	g.Subscribe, g.Read, g.Write, g.Control = []string{"*"}, []string{"*"}, []string{"*"}, []string{"*"}
	g.Tenant = AllTenants
	t := &Tokens{grants: []*Grant{g}, signIn: secret, signInGrant: g, user: true}
	t.set.Add(secret, g)
	return t, nil
}
