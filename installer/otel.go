package installer

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// The exporter settings that point a vendor's OpenTelemetry log export at
// the local sidecar (`aep-hook otel`) with its bearer token, where the
// vendor sends headers: Codex's config.toml [otel] exporter (its headers
// table), and for the VS Code agent, which reads no exporter headers from
// its settings, an environment file with OTEL_EXPORTER_OTLP_HEADERS to
// start VS Code with. Both files then hold the token, so they are made
// private to the user.

// otelMarker names the [otel] block install writes in Codex's config.toml.
const otelMarker = "# aep-hook: Codex OTel log export to the local sidecar (aep-hook otel), with its token; delete these lines to stop it."

// OTelVendors are the agents whose OTel export install can point at the
// sidecar.
var OTelVendors = []string{"codex", "vscode"}

// PlanOTel plans the exporter settings of agent ("codex" or "vscode") for
// the sidecar at base (http://HOST:PORT) with token; aepHome holds VS
// Code's environment file.
func PlanOTel(agent string, e Env, base, token, aepHome string) (Change, error) {
	switch agent {
	case "codex":
		return planCodexOTel(e, base, token)
	case "vscode":
		return planVSCodeOTel(filepath.Join(aepHome, "otel.env"), base, token)
	}
	return Change{}, fmt.Errorf("%s exports no OTel logs install can configure (it can for %s)", agent, strings.Join(OTelVendors, ", "))
}

func planCodexOTel(e Env, base, token string) (Change, error) {
	path := filepath.Join(e.homeOr("CODEX_HOME", ".codex"), "config.toml")
	c := Change{Agent: "codex", Path: path, Mode: 0o600}
	target, note, err := checkLink(e, User, path)
	if err != nil {
		return c, err
	}
	c.Target = target
	if note != "" {
		c.Notes = append(c.Notes, note)
	}
	old, err := readFile(path)
	if err != nil {
		return c, err
	}
	c.Old, c.New = old, old
	if st, err := os.Stat(path); err == nil {
		c.Mode = privateMode(st.Mode(), &c, path)
	}
	block := otelMarker + "\n[otel]\nexporter = { otlp-http = { endpoint = " + strconv.Quote(base+"/v1/logs") +
		`, protocol = "binary", headers = { authorization = ` + strconv.Quote("Bearer "+token) + " } } }\n"
	var m map[string]any
	if err := toml.Unmarshal(old, &m); err != nil {
		return c, fmt.Errorf("%s does not parse (%v); fix it first", path, err)
	}
	switch i := bytes.Index(old, []byte(otelMarker+"\n")); {
	case i >= 0:
		// Ours: the marker, the table header and the exporter line.
		end := i
		for range 3 {
			if j := bytes.IndexByte(old[end:], '\n'); j >= 0 {
				end += j + 1
			} else {
				end = len(old)
			}
		}
		c.New = append(append(append([]byte{}, old[:i]...), block...), old[end:]...)
	case m["otel"] != nil:
		c.Notes = append(c.Notes, fmt.Sprintf("%s already has an [otel] table of its own, left as it is: to export to the sidecar, set its exporter to { otlp-http = { endpoint = %q, protocol = \"binary\", headers = { authorization = \"Bearer <the token in $AEP_HOME/token>\" } } }", path, base+"/v1/logs"))
		return c, nil
	default:
		sep := ""
		if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
			sep = "\n"
		}
		if len(old) > 0 {
			sep += "\n"
		}
		c.New = append(append(append([]byte{}, old...), sep...), block...)
	}
	if err := checkCodexOTel(c.New, token); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// checkCodexOTel reads the edited config back: the exporter must send the
// token.
func checkCodexOTel(b []byte, token string) error {
	var m struct {
		OTel struct {
			Exporter map[string]struct {
				Headers map[string]string `toml:"headers"`
			} `toml:"exporter"`
		} `toml:"otel"`
	}
	if err := toml.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("the edited file does not read back (%v); configure [otel] by hand", err)
	}
	if m.OTel.Exporter["otlp-http"].Headers["authorization"] != "Bearer "+token {
		return fmt.Errorf("the edit did not take; configure [otel] by hand")
	}
	return nil
}

func planVSCodeOTel(path, base, token string) (Change, error) {
	c := Change{Agent: "vscode", Path: path, Mode: 0o600}
	old, err := readFile(path)
	if err != nil {
		return c, err
	}
	c.Old = old
	if st, err := os.Stat(path); err == nil {
		c.Mode = privateMode(st.Mode(), &c, path)
	}
	c.New = []byte("# aep-hook: the environment to start VS Code with, so the Copilot Chat agent exports its OTel logs to\n" +
		"# the local sidecar (aep-hook otel) with its token: set -a; . " + path + "; set +a; code\n" +
		"COPILOT_OTEL_ENABLED=true\n" +
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + base + "\n" +
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n" +
		"OTEL_EXPORTER_OTLP_HEADERS=Authorization=" + url.PathEscape("Bearer "+token) + "\n")
	c.NoBackup = old != nil && bytes.HasPrefix(old, []byte("# aep-hook:"))
	c.Notes = append(c.Notes, fmt.Sprintf("VS Code reads no OTel exporter headers from its settings: start it with the environment in %s (set -a; . %s; set +a; code)", path, path))
	return c, nil
}

// privateMode is the mode of a file about to hold the token: the file's
// own, closed to group and others (noted on c when that changes it).
func privateMode(m fs.FileMode, c *Change, path string) fs.FileMode {
	p := m.Perm()
	if p&0o077 != 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("%s now holds the sidecar's token: made private (%04o, was %04o)", path, p&^0o077, p))
	}
	return p &^ 0o077
}
