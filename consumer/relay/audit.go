package relay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// auditMax is the size at which the audit log is rotated (one previous
// file, audit.jsonl.1, is kept).
const auditMax = 64 << 20

// Audit is one line of the audit log: who did what, when, to whom, with
// what outcome, and never event content or a token.
type Audit struct {
	Time     string `json:"time"`
	Kind     string `json:"kind"`
	Conn     uint64 `json:"conn,omitempty"`
	Binding  string `json:"binding,omitempty"`
	Identity string `json:"identity,omitempty"`
	Remote   string `json:"remote,omitempty"`
	Role     string `json:"role,omitempty"`
	Agent    string `json:"agent,omitempty"`
	Sub      string `json:"sub,omitempty"`
	Filter   string `json:"filter,omitempty"`
	Capture  string `json:"capture,omitempty"`
	Event    string `json:"event,omitempty"` // the event's id
	Type     string `json:"type,omitempty"`
	Source   string `json:"source,omitempty"`
	Session  string `json:"session,omitempty"`
	Target   uint64 `json:"target,omitempty"` // the connection a command went to
	Code     string `json:"code,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Status   int    `json:"status,omitempty"`
	Count    int    `json:"count,omitempty"`
}

// The kinds of audit lines.
const (
	auditConnect         = "connect"
	auditDisconnect      = "disconnect"
	auditRefused         = "request-refused" // the guard refused it (Host, Origin, token)
	auditHelloRefused    = "hello-refused"
	auditSubscribe       = "subscribe"
	auditSubscribeRefuse = "subscribe-refused"
	auditUnsubscribe     = "unsubscribe"
	auditRoster          = "roster"
	auditRosterRefused   = "roster-refused"
	auditCommandRouted   = "command-routed"
	auditCommandRefused  = "command-refused"
	auditEventRejected   = "event-rejected"
	auditPost            = "post"
	auditCut             = "cut"
	auditStart           = "start"
	auditStop            = "stop"
)

// auditLog appends audit lines to a file, rotating it past auditMax.
type auditLog struct {
	path string
	now  func() time.Time
	mu   sync.Mutex
	f    *os.File
	size int64
	err  error // the last write failure, for healthz
}

func openAudit(path string, now func() time.Time) (*auditLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	a := &auditLog{path: path, now: now}
	if err := a.open(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *auditLog) open() error {
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	a.f, a.size = f, fi.Size()
	return nil
}

// record writes one line. Strings are bounded so a hostile identifier
// cannot bloat the log.
func (a *auditLog) record(r Audit) {
	if a == nil {
		return
	}
	r.Time = a.now().UTC().Format(time.RFC3339Nano)
	for _, s := range []*string{&r.Filter, &r.Reason, &r.Source, &r.Session, &r.Event, &r.Sub, &r.Agent, &r.Identity} {
		if len(*s) > 1024 {
			*s = (*s)[:1024] + "..."
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return
	}
	b = append(b, '\n')
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return
	}
	if a.size+int64(len(b)) > auditMax {
		a.f.Close()
		os.Rename(a.path, a.path+".1")
		if err := a.open(); err != nil {
			a.f, a.err = nil, err
			return
		}
	}
	n, err := a.f.Write(b)
	a.size += int64(n)
	a.err = err
}

func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}

// eventAudit fills the event fields of an audit line: identifiers only.
func eventAudit(r Audit, ev *event.Event) Audit {
	if ev != nil {
		r.Event, r.Type, r.Source, r.Session, r.Agent = ev.ID, ev.Type, ev.Source, ev.Session, ev.Agent
	}
	return r
}
