package main

import (
	"fmt"
	"net/url"

	"github.com/aep-hook/aep-hook/adapters/openclaw"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// openClawTokenEnv is where the gateway keeps its shared token.
const openClawTokenEnv = "OPENCLAW_GATEWAY_TOKEN"

// openClaw wires the OpenClaw Gateway bridge: the gateway token from
// --token-env (default OPENCLAW_GATEWAY_TOKEN), redacted everywhere.
func (c *FollowCmd) openClaw(u *url.URL, getenv func(string) string, errs shim.Recorder) (followWiring, error) {
	env := c.TokenEnv
	if env == "" {
		env = openClawTokenEnv
	}
	token := getenv(env)
	if token == "" {
		return followWiring{}, exitError{code: 2, msg: fmt.Sprintf("follow openclaw: $%s is empty (the gateway's token: openclaw config get gateway.auth.token)", env)}
	}
	bridge := &openclaw.Bridge{Base: u, Token: token, Version: version, Deltas: c.Deltas,
		Nonce: shim.NewIDs().Now, Errors: errs}
	return followWiring{
		table: "openclaw", source: bridge, mode: mapping.Primary, cursor: cursorKey(u, nil),
		secrets: map[string]string{env: token},
	}, nil
}
