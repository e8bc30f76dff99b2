package deliver

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Kind is the protocol a destination speaks.
type Kind int

// The destination kinds.
const (
	// AEP is an AEP collector over the HTTP binding (AEP-0003 §3.2).
	AEP Kind = iota + 1
	// OTLP is an OpenTelemetry endpoint over OTLP/HTTP protobuf
	// (AEP-0005 §3 projection).
	OTLP
)

// String names the kind as the status report does.
func (k Kind) String() string {
	switch k {
	case AEP:
		return "aep"
	case OTLP:
		return "otlp"
	}
	return "unknown"
}

// Destination is one parsed --out value.
type Destination struct {
	Kind Kind
	// Raw is the value as given, minus any trailing slash; it is the
	// destination's identity for cursors and status.
	Raw string
	// Endpoint is the URL requests go to: {base}/events for AEP,
	// {base}/v1/logs for OTLP.
	Endpoint string
	// Host is the URL's host (without port), for the token check.
	Host string
	// Plain is true when the transport is http rather than https.
	Plain bool
}

// Key is the file-name-safe form of the destination, naming its cursor
// folder under $AEP_HOME/cursors.
func (d Destination) Key() string { return shim.SafeName(d.Raw) }

// String is the destination as shown to the user.
func (d Destination) String() string { return d.Raw }

// ParseDestinations parses --out values: each may itself be a comma list.
// Empty items are ignored; duplicates are removed, first kept.
func ParseDestinations(values []string) ([]Destination, error) {
	var out []Destination
	seen := map[string]bool{}
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			d, err := ParseDestination(item)
			if err != nil {
				return nil, err
			}
			if !seen[d.Raw] {
				seen[d.Raw] = true
				out = append(out, d)
			}
		}
	}
	return out, nil
}

// ParseDestination parses one destination:
// http(s)://HOST[:PORT][/BASE] for an AEP collector, or
// otlp+http(s)://HOST[:PORT][/BASE] for an OTLP/HTTP endpoint.
func ParseDestination(s string) (Destination, error) {
	// Every message quotes the value with its credentials removed,
	// whatever its shape (no scheme, userinfo, a query token); the parser's
	// own error is not quoted, since it repeats the value.
	shown := redact.Destination(s)
	u, err := url.Parse(s)
	if err != nil {
		return Destination{}, fmt.Errorf("destination %q: not a URL; use http(s)://HOST[:PORT][/BASE] or otlp+http(s)://HOST[:PORT][/BASE]", shown)
	}
	if u.User != nil || strings.Contains(u.Opaque, "@") {
		return Destination{}, fmt.Errorf("destination %q: credentials in the URL are refused; use --token / AEP_TOKEN", shown)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return Destination{}, fmt.Errorf("destination %q: a query or fragment is not allowed; use --token / AEP_TOKEN for a token", shown)
	}
	if u.Host == "" || u.Hostname() == "" {
		return Destination{}, fmt.Errorf("destination %q: no host", shown)
	}
	d := Destination{Host: u.Hostname()}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "http", "https":
		d.Kind = AEP
	case "otlp+http", "otlp+https":
		d.Kind = OTLP
		scheme = strings.TrimPrefix(scheme, "otlp+")
	case "otlp+grpc", "otlp+grpcs", "grpc":
		return Destination{}, fmt.Errorf("destination %q: OTLP over gRPC is not supported (it would cost every hook process its init time); use otlp+http://HOST:4318", shown)
	default:
		return Destination{}, fmt.Errorf("destination %q: unknown scheme %q; use http(s):// for an AEP collector or otlp+http(s):// for OTLP", shown, redact.Destination(u.Scheme))
	}
	d.Plain = scheme == "http"
	base := strings.TrimRight(u.EscapedPath(), "/")
	d.Raw = strings.ToLower(u.Scheme) + "://" + u.Host + base
	hostURL := scheme + "://" + u.Host + base
	if d.Kind == AEP {
		d.Endpoint = hostURL + "/events"
	} else {
		d.Endpoint = hostURL + "/v1/logs"
	}
	return d, nil
}

// Loopback reports whether host names this machine: "localhost" or a
// loopback address.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrPlainToken is returned by CheckToken when a token would cross the
// network unencrypted.
var ErrPlainToken = errors.New("refusing to send the bearer token over plain http to a non-loopback host; use https, or pass --insecure")

// CheckToken refuses a token over plain http to a host other than this
// machine, unless insecure is set (AEP-0003 §8.1: off-host bindings need
// TLS).
func CheckToken(d Destination, token string, insecure bool) error {
	if token == "" || !d.Plain || insecure || Loopback(d.Host) {
		return nil
	}
	return fmt.Errorf("destination %s: %w", d.Raw, ErrPlainToken)
}
