package main

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/adapters/kimiweb"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control"
)

// kimiWebTokenEnv names the kimi web token for the redaction pipeline (it
// is read from a file, not the environment).
const kimiWebTokenEnv = "AEP_KIMI_WEB_TOKEN"

// kimiWeb wires the Kimi web bridge: the token from --token-file (default
// the server's own file under KIMI_CODE_HOME), companion mode unless asked.
func (c *FollowCmd) kimiWeb(u *url.URL, getenv func(string) string, errs shim.Recorder) (followWiring, error) {
	path := c.TokenFile
	if path == "" {
		home := getenv("KIMI_CODE_HOME")
		if home == "" {
			h, _ := os.UserHomeDir()
			home = filepath.Join(h, ".kimi-code")
		}
		path = filepath.Join(home, "server.token")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return followWiring{}, exitError{code: 2, msg: fmt.Sprintf("follow kimi-web: the server token: %v (start kimi web once, or pass --token-file)", err)}
	}
	token := strings.TrimSpace(string(b))
	if token == "" || len(token) > 4096 {
		return followWiring{}, exitError{code: 2, msg: fmt.Sprintf("follow kimi-web: %s holds no token", path)}
	}
	u.User = nil
	mode := c.mode(mapping.Companion)
	bridge := &kimiweb.Bridge{
		Base: u, Token: token, Mode: mode, Deltas: c.Deltas, Errors: errs,
		Nonce: shim.NewIDs().Now,
	}
	return followWiring{
		table: "kimi-web", source: bridge, mode: mode, cursor: cursorKey(u, nil),
		resume:   bridge.Resume,
		secrets:  map[string]string{kimiWebTokenEnv: token},
		deliver:  bridge.Deliver,
		handlers: map[string]control.Handler{control.Cancel: bridge.Cancel},
	}, nil
}
