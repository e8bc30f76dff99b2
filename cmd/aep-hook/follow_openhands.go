package main

import (
	"net/url"

	"github.com/aep-hook/aep-hook/adapters/openhands"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// openHandsKeyEnv is the default environment variable holding the
// agent server's session API key.
const openHandsKeyEnv = "OH_SESSION_API_KEY"

// openHands wires the OpenHands bridge: the key from --api-key-env (default
// OH_SESSION_API_KEY; none for a server without keys), every conversation
// the server lists unless --conversation names some.
func (c *FollowCmd) openHands(u *url.URL, getenv func(string) string, errs shim.Recorder) (followWiring, error) {
	keyEnv := c.APIKeyEnv
	if keyEnv == "" {
		keyEnv = openHandsKeyEnv
	}
	key := getenv(keyEnv)
	if c.APIKeyEnv != "" && key == "" {
		return followWiring{}, exitError{code: 2, msg: "follow openhands: $" + c.APIKeyEnv + " is empty"}
	}
	// The key is a secret: the redaction pipeline knows its value.
	c.SecretEnv = append(c.SecretEnv, keyEnv)
	u.User = nil
	bridge := &openhands.Bridge{
		Base: u, APIKey: key, Conversations: c.Conversation, Deltas: c.Deltas, Errors: errs,
		Nonce: shim.NewIDs().Now,
	}
	return followWiring{
		table: "openhands", source: bridge, mode: mapping.Primary,
		cursor: cursorKey(u, c.Conversation), resume: bridge.Resume,
	}, nil
}
