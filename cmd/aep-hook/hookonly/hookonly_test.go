package main

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// buildPair builds the full binary and this hook-only build (without the
// full one inside: it then runs aep-hook-full beside itself, as a checkout
// build does) into one folder.
func buildPair(t *testing.T) (front, full string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	dir := t.TempDir()
	front, full = filepath.Join(dir, "aep-hook"), filepath.Join(dir, "aep-hook-full")
	for _, b := range [][2]string{{full, ".."}, {front, "."}} {
		cmd := exec.Command("go", "build", "-o", b[0], b[1])
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b[1], err, out)
		}
	}
	return front, full
}

type runOut struct {
	stdout []byte
	code   int
}

func runBin(t *testing.T, bin, home string, stdin []byte, args ...string) runOut {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOOK_DEADLINE=20s")
	cmd.Stdin = bytes.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return runOut{out.Bytes(), code}
}

// volatile are what differs between any two runs: times, epochs (a
// session's first epoch is read from the clock) and the ULIDs minted for
// events and runs.
var (
	volatile = regexp.MustCompile(`"(time)":"[^"]*"`)
	epochs   = regexp.MustCompile(`"epoch":[0-9]+`)
	ulids    = regexp.MustCompile(`\b[0-9A-HJKMNP-TV-Z]{26}\b`)
)

// records is every log and state file of home, ids and times blanked.
func records(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(home, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || strings.Contains(p, "internal") {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(home, p)
		b = epochs.ReplaceAll(volatile.ReplaceAll(b, []byte(`"$1":""`)), []byte(`"epoch":0`))
		out[rel] = ulids.ReplaceAllString(string(b), "ULID")
		return nil
	})
	return out
}

// TestHookOnlyMatchesFull runs every hook vendor's pinned moments through
// the hook-only build and the full binary: the same reply, byte for byte,
// the same exit status, and the same record (ids and times aside).
func TestHookOnlyMatchesFull(t *testing.T) {
	front, full := buildPair(t)
	dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", "../shared/aep-spec/conformance/fixtures/mappings")
	if !ok {
		t.Skip("no conformance pins")
	}
	homeF, homeH := t.TempDir(), t.TempDir()
	vendors := 0
	for _, v := range mapping.Vendors() {
		if v.Transport != mapping.TransportHook {
			continue
		}
		cases, _, err := pins.LoadPins(dir, v.Name)
		if err != nil || len(cases) == 0 {
			continue
		}
		vendors++
		for _, c := range cases {
			for _, s := range c.Steps {
				args := []string{v.Name}
				if s.Hook != "" {
					args = append(args, s.Hook)
				}
				a, b := runBin(t, full, homeF, s.Input, args...), runBin(t, front, homeH, s.Input, args...)
				if !bytes.Equal(a.stdout, b.stdout) || a.code != b.code {
					t.Errorf("%s %s: hook-only build replied %q (exit %d), the full binary %q (exit %d)",
						v.Name, c.Name, b.stdout, b.code, a.stdout, a.code)
				}
			}
		}
	}
	if vendors < 9 {
		t.Errorf("only %d hook vendors have pins", vendors)
	}
	rf, rh := records(t, homeF), records(t, homeH)
	var names []string
	for k := range rf {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(rf) != len(rh) {
		t.Errorf("the full binary wrote %d files, the hook-only build %d", len(rf), len(rh))
	}
	for _, k := range names {
		if rf[k] != rh[k] {
			t.Errorf("%s differs:\nfull:\n%s\nhook-only:\n%s", k, rf[k], rh[k])
		}
	}
}

// TestHookOnlyHandsOver: every verb that is not a plain hook firing runs
// the full binary (same output), which learns the path to register is the
// hook-only build's; a hook with a flag only the full parser knows is
// still replied to and recorded.
func TestHookOnlyHandsOver(t *testing.T) {
	front, full := buildPair(t)
	home := t.TempDir()
	for _, args := range [][]string{{"version"}, {"--help"}, {"map", "--help"}} {
		a, b := runBin(t, full, home, nil, args...), runBin(t, front, home, nil, args...)
		if !bytes.Equal(a.stdout, b.stdout) || a.code != b.code {
			t.Errorf("%v: hook-only build gave %q (exit %d), the full binary %q (exit %d)", args, b.stdout, b.code, a.stdout, a.code)
		}
	}
	if p := runBin(t, front, home, nil, "plugin", "pi"); !bytes.Contains(p.stdout, []byte(front)) || bytes.Contains(p.stdout, []byte(full)) {
		t.Errorf("the plugin the hook-only build prints does not start it:\n%s", p.stdout)
	}
	in := []byte(`{"session_id":"s-flag","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1"}`)
	a, b := runBin(t, full, t.TempDir(), in, "claude-code", "--no-such-flag"), runBin(t, front, home, in, "claude-code", "--no-such-flag")
	if !bytes.Equal(a.stdout, b.stdout) || b.code != 0 {
		t.Errorf("unknown flag: hook-only build replied %q (exit %d), the full binary %q", b.stdout, b.code, a.stdout)
	}
	if _, err := os.Stat(filepath.Join(home, "logs", "claude-code", "s-flag.jsonl")); err != nil {
		t.Errorf("the firing with an unknown flag was not recorded: %v", err)
	}
}

// relayHandOver runs in, a control-enabled claude-code firing, through the
// full binary and then the hook-only build, each with a home of its own and
// AEP_RELAY=relay, the relay listening on l: the two replies must be the
// same byte for byte, and a connection from each run must reach l with
// want as its first bytes. opening names what want is (a TLS handshake,
// an upgrade request) and relayName the relay, in the messages.
func relayHandOver(t *testing.T, front, full string, l net.Listener, relay string, in []byte, want, opening, relayName string) {
	t.Helper()
	first := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b := make([]byte, len(want))
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			// Handed on before the close, which is what ends the run
			// that opened the connection.
			if n, _ := io.ReadFull(c, b); n == len(b) {
				first <- string(b)
			}
			c.Close()
		}
	}()
	run := func(bin string) []byte {
		cmd := exec.Command(bin, "claude-code")
		cmd.Env = append(os.Environ(), "AEP_HOME="+t.TempDir(), "AEP_HOOK_DEADLINE=20s", "AEP_CONTROL=1",
			"AEP_RELAY="+relay, "AEP_RELAY_TOKEN=t0123456789")
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", bin, err)
		}
		return out
	}
	a, b := run(full), run(front)
	if !bytes.Equal(a, b) {
		t.Errorf("hook-only build replied %q, the full binary %q", b, a)
	}
	for i, who := range []string{"full binary", "hook-only build"} {
		select {
		case r := <-first:
			if r != want {
				t.Errorf("%s: the relay's first bytes are %q, not %q (%s)", who, r, want, opening)
			}
		default:
			t.Errorf("%s (run %d): no connection reached the %s", who, i+1, relayName)
		}
	}
}

// TestHookOnlyHandsOverTLS: a control-enabled hook whose relay is wss://
// is held by the full binary, since the hook-only build does not link
// TLS: the relay sees a TLS handshake begin, and the agent still gets the
// full binary's reply.
func TestHookOnlyHandsOverTLS(t *testing.T) {
	front, full := buildPair(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	in := []byte(`{"session_id":"s-wss","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	// 0x16 opens a TLS handshake record.
	relayHandOver(t, front, full, l, "wss://"+l.Addr().String()+"/socket", in, "\x16", "a TLS handshake", "wss relay")
}

// TestHookOnlyHandsOverHostNames: a control-enabled hook whose relay is
// named by a host name (not an IP address or localhost) is held by the
// full binary, since the hook-only build does not link Go's resolver: the
// relay sees the upgrade request from both builds, and the replies match.
func TestHookOnlyHandsOverHostNames(t *testing.T) {
	// The machine's own name is a host name to the control package's
	// dialer, and the hosts file resolves it for Go's.
	name, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	addrs, err := net.LookupHost(name)
	if err != nil || len(addrs) == 0 {
		t.Skipf("this machine's name %q does not resolve: %v", name, err)
	}
	front, full := buildPair(t)
	l, err := net.Listen("tcp", net.JoinHostPort(addrs[0], "0"))
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addrs[0], err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	in := []byte(`{"session_id":"s-host","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`)
	relayHandOver(t, front, full, l, "ws://"+net.JoinHostPort(name, port)+"/socket", in, "GET ", "an upgrade request", "relay")
}

// TestHookOnlyLinksOnlyTheHookPath keeps what makes a process start slow
// out of the hook-only build: every package linked initialises in every
// hook process.
func TestHookOnlyLinksOnlyTheHookPath(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, heavy := range []string{"net/http", "crypto/tls", "crypto/x509", "github.com/alecthomas/kong", "go.opentelemetry.io/", "github.com/json-iterator/",
			"github.com/oklog/ulid", "github.com/fsnotify/", "google.golang.org/", "github.com/aep-hook/aep-hook/shim/deliver", "github.com/aep-hook/aep-hook/harness/"} {
			if strings.HasPrefix(pkg, heavy) {
				t.Errorf("the hook-only build links %s", pkg)
			}
		}
		// Package net's initialisation (its DNS tables among it) and
		// code cost every hook; on Linux the relay's dialer is the
		// control package's own.
		if pkg == "net" && runtime.GOOS == "linux" {
			t.Errorf("the hook-only build links package net")
		}
	}
}

// TestHookOnlyInitIsSmall bounds what the hook-only build's package
// initialisation allocates (GODEBUG=inittrace=1 counts it exactly): a
// regexp compiled or a table built at package init costs every hook
// process, and shows here as tens of allocations; such things belong in a
// sync.OnceValue.
func TestHookOnlyInitIsSmall(t *testing.T) {
	front, _ := buildPair(t)
	cmd := exec.Command(front, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("version: %v\n%s", err, stderr.String())
	}
	line := regexp.MustCompile(`^init (\S+) @.* (\d+) bytes, (\d+) allocs$`)
	total := 0
	for _, l := range strings.Split(stderr.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[3])
		total += n
		if n > 60 {
			t.Errorf("package %s allocates %d times at init (bound 60): compile or build it on first use", m[1], n)
		}
	}
	if total == 0 || total > 300 {
		t.Errorf("package initialisation allocates %d times in all (bound 300)", total)
	}
}
