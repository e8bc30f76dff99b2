// Command hookonly is the aep-hook that `make build` and `make install`
// produce: the hook path alone, with the full aep-hook binary inside it.
//
// Every hook firing of every agent starts a process, and a Go process pays
// at start for every package it links: the full binary's kong, net/http,
// pdata and the rest cost each hook about twice a minimal Go program. This
// build links only what a hook firing needs (the mapping tables, the
// emitter, redaction, the file log), so a hook starts like that minimal
// program. Every other verb, and a hook whose command line asks for more
// (delivery to --out destinations, a flag only the full parser knows),
// goes to the full binary: it is carried inside this one, written once to
// the user's cache folder and executed in this process's place with the
// same arguments, environment and standard streams, so the user installs
// and registers one file.
//
// `go install .../cmd/aep-hook@latest` builds the full binary alone; it
// does everything this one does, its hooks start slower.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/mapping"
)

// version is set at build time with -ldflags "-X main.version=...", as the
// full binary's is.
var version = "dev"

func main() {
	args := os.Args[1:]
	if a := hookmode.AdapterFromArgv0(os.Args[0]); a != "" {
		args = append([]string{a}, args...)
	}
	if v, ok := hookmode.HookVendor(args); ok {
		f, ok := hookmode.ParseArgs(args[1:], os.Getenv)
		// A wss:// relay needs TLS, and one named by a host name Go's
		// resolver, which this build leaves out: the full binary holds
		// such a moment (the handshake or lookup dwarfs the hand-over).
		relay := hookmode.RelayNeedsSecure(os.Getenv)
		if ok && len(f.Out) == 0 && relay == "" {
			os.Exit(runHook(v, len(args), f, nil))
		}
		// The full binary delivers, or parses what this one cannot; a hook
		// must still never fail its agent, so without it the firing is
		// recorded on the defaults with the reason.
		err := execFull(os.Args)
		switch {
		case ok && strings.HasPrefix(relay, "wss://"):
			err = fmt.Errorf("control over the wss:// relay skipped: %w", err)
		case ok && relay != "":
			err = fmt.Errorf("control over a relay named by a host name skipped: %w", err)
		case ok:
			err = fmt.Errorf("delivery to --out skipped: %w", err)
		default:
			// As the full binary does with flags it does not know.
			f = hookmode.Flags{}
			err = fmt.Errorf("hook flags not understood, recorded on the defaults: %w", err)
		}
		os.Exit(runHook(v, len(args), f, err))
	}
	if len(args) == 1 && args[0] == "version" {
		os.Stdout.WriteString("aep-hook " + version + " (AEP 0.1)\n")
		return
	}
	err := execFull(os.Args)
	fmt.Fprintf(os.Stderr, "aep-hook: %v\n", err)
	os.Exit(2)
}

// runHook runs one firing of vendor v, whose command line held nargs
// arguments.
func runHook(v mapping.Vendor, nargs int, f hookmode.Flags, setup error) int {
	// Held from here until the runner takes its own scoped hold: an agent
	// that signals its hook right after starting it (Claude Code's
	// StopFailure in -p mode) still gets the moment recorded; the runner's
	// deadline bounds the process.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	growStack(nargs)
	res := hookmode.Run(v, f, setup, os.Stdin, os.Stdout, os.Getenv)
	if !res.Interrupted {
		hookmode.SweepOccasionally(res.Emitter, v.AgentName())
	}
	return res.Code
}

// growStack takes this goroutine's stack to the size a firing needs in
// one step, while the stack is shallow. A stack grows by doubling, and each
// growth copies it and walks its frames through the function tables: a
// firing's deepest paths (the redaction gate over nested JSON, the
// digests' encoder) grew it from its start size several times, about a
// twentieth of the firing's instructions and a dozen page faults. This
// frame is what the hook-only build's firings were measured to need (a
// larger one costs page faults for stack the firing never uses); a
// firing that goes deeper still grows on its own.
//
//go:noinline
func growStack(n int) byte {
	var frame [24 << 10]byte
	frame[n%len(frame)] = 1
	return frame[(n*7)%len(frame)]
}
