package guard

// AllowFlags are the Host and Origin allowances every aep-hook listener
// takes on its command line (the relay, the OTLP sidecar, the HTTP tees),
// with the same names and environment twins everywhere, so one setting
// means the same thing to each of them. A command embeds them
// (`embed:""`) and hands them to its Guard.
type AllowFlags struct {
	AllowHost   []string `name:"allow-host" help:"Another name clients address this listener by in Host, NAME or NAME:PORT (a reverse proxy's, or this machine's when listening off loopback); repeatable." env:"AEP_ALLOW_HOSTS,AEP_ALLOW_HOST" sep:"," placeholder:"NAME"`
	AllowOrigin []string `name:"allow-origin" help:"A browser origin (scheme://host[:port]) allowed to call this listener; repeatable. Other origins are refused." env:"AEP_ALLOW_ORIGINS,AEP_ALLOW_ORIGIN" sep:"," placeholder:"ORIGIN"`
}

// Hosts are the extra names allowed in Host, cleaned of blanks (a list
// given in the environment may end with a comma).
func (a AllowFlags) Hosts() []string { return clean(a.AllowHost) }

// Origins are the extra browser origins allowed, cleaned likewise.
func (a AllowFlags) Origins() []string { return clean(a.AllowOrigin) }

func clean(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}
