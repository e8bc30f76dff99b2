package tail

import (
	"strings"
	"unicode/utf8"

	"github.com/aep-hook/aep-hook/internal/printable"
	"github.com/aep-hook/aep-hook/shim"
)

// Column widths shared by tail and timeline.
const (
	// minTypeWidth is the narrowest type column.
	minTypeWidth = 28
	// maxTypeWidth bounds the type column; longer types are shortened in
	// the middle to fit it, so every line keeps its columns.
	maxTypeWidth = 48
)

// pad returns s (already printable) padded with blanks to w runes.
func pad(s string, w int) string {
	if n := utf8.RuneCountInString(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// middle shortens printable s to at most n runes by cutting its middle:
// the start names the category or vendor, the end the moment, and both
// are what tell two long values apart.
func middle(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 3 {
		return s
	}
	head := (n - 1) / 2
	tail := n - 1 - head
	return string(r[:head]) + "…" + string(r[len(r)-tail:])
}

// typeCell is an event type fitted to a column of width w.
func typeCell(typ string, w int) string {
	return pad(middle(printable.String(typ), w), w)
}

// typeWidth is the type column's width for events whose longest type has
// n runes.
func typeWidth(n int) int { return max(minTypeWidth, min(maxTypeWidth, n)) }

// shortID shows an id in at most n runes. Vendors often build run ids from
// their session id ("<session>-turn-3"): that prefix says nothing beside
// the session column, so it goes first; what remains is shortened in the
// middle, keeping the end where such ids differ.
func shortID(id, session string, n int) string {
	if session != "" && len(id) > len(session) && strings.HasPrefix(id, session) {
		if rest := strings.TrimLeft(id[len(session):], "-_:.~/#"); rest != "" {
			id = rest
		}
	}
	return middle(printable.String(id), n)
}

// maxRequests bounds the attention requests remembered to name what a
// follow-up answers; past it the oldest are forgotten (their follow-ups
// then say only the request's id).
const maxRequests = 4096

// requests remembers attention requests so their follow-ups can say what
// they settle. The zero value is ready.
type requests struct {
	by    map[string]string // request id -> "kind subject"
	order []string
}

// add remembers e when it is an attention request.
func (r *requests) add(e *shim.Event) {
	if e.Type != "attention.requested" || e.ID == "" {
		return
	}
	if r.by == nil {
		r.by = map[string]string{}
	}
	if _, ok := r.by[e.ID]; !ok {
		r.order = append(r.order, e.ID)
	}
	kind, _ := e.Data["kind"].(string)
	r.by[e.ID] = strings.TrimSpace(printable.String(kind) + " " + printable.Clip(e.Subject, 40))
	if len(r.order) > maxRequests {
		delete(r.by, r.order[0])
		r.order = r.order[1:]
	}
}

// settles is what an attention follow-up answers ("  <- permission
// shell"), "" for other events.
func (r *requests) settles(e *shim.Event) string {
	switch e.Type {
	case "attention.answered", "attention.resolved", "attention.timeout", "attention.routed":
	default:
		return ""
	}
	if what, ok := r.by[e.Subject]; ok {
		return "  <- " + what
	}
	return ""
}

// debug reports a debug-level event, which the human views hide unless
// asked.
func debug(e *shim.Event) bool { return e.Severity == "debug" }
