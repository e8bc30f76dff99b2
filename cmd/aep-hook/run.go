package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/aep-hook/aep-hook/adapters/otlp"
	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim/control"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// CLI is the command tree. Vendor hook commands are added dynamically, one
// per mapping table.
type CLI struct {
	Map       MapCmd       `cmd:"" help:"Dry run: map vendor moments (JSON lines on stdin) to AEP events on stdout; writes nothing."`
	Redact    RedactCmd    `cmd:"" help:"Redact secrets, home paths and PII from stdin (text, or JSON with --json)."`
	Downlevel DownlevelCmd `cmd:"" help:"Down-level AEP events (JSON lines on stdin) to a lower capture ceiling."`
	Ship      ShipCmd      `cmd:"" help:"Deliver the local logs' backlog to the --out destinations (AEP collector, OTLP); exit 1 when one failed, 3 when one refused events (put aside)."`
	Otel      OtelCmd      `cmd:"" help:"OTLP sidecar: receive Codex / VS Code OpenTelemetry logs (on ${otel_listen}) and emit AEP events."`
	Acp       AcpCmd       `cmd:"" name:"acp" help:"ACP tee: run an ACP agent (aep-hook acp -- CMD ARGS...) and record its traffic."`
	Agui      AguiCmd      `cmd:"" name:"agui" help:"AG-UI tee: reverse-proxy an AG-UI agent endpoint and record its event stream."`
	A2a       A2aCmd       `cmd:"" name:"a2a" help:"A2A tee: reverse-proxy an A2A server (JSON-RPC and its streams) and record its tasks."`
	Follow    FollowCmd    `cmd:"" help:"Stream bridge: follow an agent server's event stream (opencode, kilo, kimi-web, openhands, a2a, openclaw: aep-hook follow opencode --url URL)."`
	Plugin    PluginCmd    `cmd:"" help:"Print the OpenCode, Kilo or pi forwarder plugin (for the agent's plugin or extensions folder)."`
	Forward   ForwardCmd   `cmd:"" help:"Record what the OpenCode, Kilo or pi forwarder plugin writes to stdin (started by the plugin)."`
	Timeline  TimelineCmd  `cmd:"" help:"Print AEP JSONL logs as a human-readable timeline; exit 1 when a line is not an AEP event."`
	Relay     RelayCmd     `cmd:"" help:"Serve the record over the AEP SSE and WebSocket bindings (filters, resume, tokens, tenants) and route control commands."`
	Notify    NotifyCmd    `cmd:"" help:"Route the attention requests a relay serves to the desktop, ntfy and webhooks, once per route, recording each as attention.routed."`
	Pending   PendingCmd   `cmd:"" help:"What waits for a human now, across the fleet (from the relay), and which requests can be answered over control."`
	Answer    AnswerCmd    `cmd:"" help:"Answer a pending request over the control loop (--allow, --deny, --option, --text, --values); the outcome read back from the target."`
	Tail      TailCmd      `cmd:"" help:"The live timeline across every agent's logs (--follow), with attr-match --filter; open runs and pending attention first."`
	Doctor    DoctorCmd    `cmd:"" help:"The problems first, one line each with its fix; then per agent: starts, registered, trusted, recording (a probe through the registered command); settings, this home's internal failures, delivery backlog. Exit 1 when anything is wrong."`
	Install   InstallCmd   `cmd:"" help:"Register aep-hook in each agent's own settings (merging; backup first; --dry-run says what would change)."`
	Uninstall UninstallCmd `cmd:"" help:"Remove exactly the registrations install added, and the folders and backups it made for them."`
	Validate  ValidateCmd  `cmd:"" help:"Check AEP JSONL against AEP-0001 (envelope, order, references, terminals), AEP-0004 acks, AEP-0006 form answers and the payload schemas (capture levels); exit 1 on a violation."`
	Version   VersionCmd   `cmd:"" help:"Print the version."`
}

// adapterFromArgv0 returns the adapter a link named aep-<adapter> stands for.
func adapterFromArgv0(arg0 string) string { return hookmode.AdapterFromArgv0(arg0) }

// run is main without the process: it parses args and returns the exit
// status. Hook mode never returns anything but 0.
func run(argv []string, s Streams, getenv func(string) string) int {
	args := argv[1:]
	if a := adapterFromArgv0(argv[0]); a != "" {
		args = append([]string{a}, args...)
	}
	// The hot paths skip kong: hook mode (see parseHookArgs), the pi
	// gate's held run, which pi waits on as on a hook, and version, whose
	// cost beside the floor is meant to show package initialisation alone.
	if len(args) > 0 {
		if v, ok := mapping.Lookup(args[0]); ok && v.Transport == mapping.TransportHook {
			if hc, ok := parseHookArgs(args[1:], getenv); ok {
				hc.vendor, hc.getenv = v, getenv
				s.enterHook()
				return hc.run(&s)
			}
		}
		if len(args) == 1 && args[0] == "version" {
			VersionCmd{}.Run(&s)
			return 0
		}
		if code, ok := piHoldFast(args, &s, getenv); ok {
			return code
		}
	}
	p, err := newParser(&s, getenv)
	if err != nil {
		fmt.Fprintf(s.Err, "aep-hook: %v\n", err)
		return 2
	}
	// Hook mode must never fail the agent: a registration with a flag this
	// version does not know still runs the hook, on the defaults.
	if len(args) > 0 {
		if hc, ok := p.hooks[args[0]]; ok {
			s.enterHook()
			ctx, perr := p.Parse(args)
			if p.exit != nil {
				return *p.exit // --help
			}
			if perr != nil || ctx == nil {
				hc2 := &HookCmd{vendor: hc.vendor, getenv: getenv, parseErr: perr}
				return hc2.run(&s)
			}
			return hc.run(&s)
		}
	}
	if len(args) == 0 {
		args = []string{"--help"}
	}
	args = joinNegativeLast(args)
	warnDeprecated(args, s.Err)
	ctx, err := p.Parse(args)
	switch {
	case p.exit != nil:
		return *p.exit // --help printed, or kong asked to stop
	case err != nil:
		fmt.Fprintf(s.Err, "aep-hook: %s\n", redact.Diagnostic(err.Error()))
		return 2
	case ctx == nil || ctx.Command() == "":
		return 0
	}
	if err := ctx.Run(&s); err != nil {
		var ee exitError
		if errors.As(err, &ee) {
			if ee.msg != "" {
				fmt.Fprintf(s.Err, "aep-hook: %s\n", redact.Diagnostic(ee.msg))
			}
			return ee.code
		}
		fmt.Fprintf(s.Err, "aep-hook: %s\n", redact.Diagnostic(err.Error()))
		return 1
	}
	return 0
}

// deprecatedFlags are old flag names kept working, with their new names.
var deprecatedFlags = map[string]string{
	"--no-pii": "--keep-pii (it keeps e-mail addresses and phone numbers; the old name said the opposite)",
	"--bin":    "--binary (as install names it)",
}

// warnDeprecated says on w when args use an old flag name (a verb's
// command line, never a hook's: a hook writes nothing the agent could
// show).
func warnDeprecated(args []string, w io.Writer) {
	for _, a := range args {
		if a == "--" {
			return
		}
		name, _, _ := strings.Cut(a, "=")
		if instead, ok := deprecatedFlags[name]; ok {
			fmt.Fprintf(w, "aep-hook: %s is deprecated; use %s\n", name, instead)
		}
	}
}

// parser is the kong command tree with one hook command per hook vendor.
type parser struct {
	*kong.Kong
	cli   CLI
	hooks map[string]*HookCmd
	// exit is the status kong asked to exit with (after printing --help),
	// nil until it does; what Parse returns after that is moot.
	exit *int
}

// newParser builds the command tree, reading environment twins through
// getenv.
func newParser(s *Streams, getenv func(string) string) (*parser, error) {
	p := &parser{hooks: map[string]*HookCmd{}}
	opts := []kong.Option{
		kong.Name("aep-hook"),
		kong.Description(description()),
		kong.Writers(s.Out, s.Err),
		kong.Exit(func(c int) {
			if p.exit == nil {
				p.exit = &c
			}
		}),
		kong.Bind(s),
		kong.Vars{"version": version, "otel_vendors": strings.Join(otlp.VendorNames(), ","),
			"otel_listen": otlp.DefaultListen, "otel_grpc": otlp.DefaultGRPCListen, "relay_socket": control.DefaultRelay},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Resolvers(envResolver(getenv)),
	}
	for _, v := range mapping.Vendors() {
		if v.Transport != mapping.TransportHook {
			continue
		}
		hc := &HookCmd{vendor: v, getenv: getenv}
		p.hooks[v.Name] = hc
		opts = append(opts, kong.DynamicCommand(v.Name, v.Summary, "Hook adapters (register as the agent's hook command)", hc))
	}
	k, err := kong.New(&p.cli, opts...)
	p.Kong = k
	return p, err
}

// description is the help text above the commands. Tables that are not
// hook commands (tees, the OTLP sidecar's channels) are listed here, one
// line each, so --help names every adapter.
func description() string {
	var b strings.Builder
	b.WriteString("Turns what coding agents do into AEP 0.1 events. Register `aep-hook <adapter>` as the agent's hook command; logs go to $AEP_HOME/logs (default ~/.aep/logs).\n\nChannel adapters (aep-hook map <name>, and the tee or sidecar shown):\n")
	for _, v := range mapping.Vendors() {
		if v.Transport != mapping.TransportHook {
			fmt.Fprintf(&b, "  %-12s %s\n", v.Name, strings.TrimSuffix(v.Summary, "."))
		}
	}
	return b.String()
}

// envResolver makes kong read `env:"..."` twins through getenv, so tests
// need not touch the process environment.
func envResolver(getenv func(string) string) kong.Resolver {
	return kong.ResolverFunc(func(_ *kong.Context, _ *kong.Path, f *kong.Flag) (any, error) {
		for _, name := range f.Envs {
			if v := getenv(name); v != "" {
				return v, nil
			}
		}
		return nil, nil
	})
}

// VersionCmd is `aep-hook version`.
type VersionCmd struct{}

// Run prints the version.
func (VersionCmd) Run(s *Streams) error {
	fmt.Fprintf(s.Out, "aep-hook %s (AEP 0.1)\n", version)
	return nil
}
