package jsonbound

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"strconv"
	"time"
)

// Limits bound what Bound keeps of a payload verbatim.
type Limits struct {
	// MaxDepth is the deepest nesting kept, in levels below the root.
	MaxDepth int
	// MaxValue is the largest value kept, in bytes.
	MaxValue int
	// MaxTotal is the largest payload kept, in bytes.
	MaxTotal int
	// MaxWork bounds, for one kept value, the sum over its bytes of their
	// depth inside it: what decoding it costs a reader that rescans each
	// level (gjson's Result.Value does).
	MaxWork int64
	// Open is the deepest level whose containers are opened, keeping what
	// fits of their members, rather than replaced whole.
	Open int
	// MaxMembers is how many members of one opened container are judged
	// one by one; the rest are judged as one run.
	MaxMembers int
	// Deadline, when set, is when the digests of the values left out must
	// be done: a digest not done by then is given up, and its placeholder
	// says the digest is unknown (Report.Late), so that a payload too big
	// to digest in the time a hook has is still recorded, without it.
	Deadline time.Time

	// clockEvery, when positive, is how many tokens pass between two
	// readings of the time (tests make it small); 0 means clockEvery.
	clockEvery int
}

// DefaultLimits keep every payload an agent sends in practice verbatim and
// any payload's cost to the readers after Bound to a few megabytes of work.
var DefaultLimits = Limits{
	MaxDepth:   64,
	MaxValue:   1 << 20,
	MaxTotal:   4 << 20,
	MaxWork:    8 << 20,
	Open:       2,
	MaxMembers: 256,
}

// maxNodes bounds the values Bound judges one by one.
const maxNodes = 4096

// Marker is the key of a placeholder object, as Bound writes it. Its NUL
// makes it a key no agent writes; a payload that holds it anyway has the
// value around it replaced, so every placeholder in Bound's output is one
// Bound made.
const Marker = `"\u0000aep.omitted"`

var markerKey = []byte(Marker)

// markerText is Marker decoded.
const markerText = "\x00aep.omitted"

// Report says what Bound left out.
type Report struct {
	// Omitted counts the values (or runs of members) replaced by
	// placeholders; OmittedBytes their size.
	Omitted, OmittedBytes int
	// Deep, Big and Cut count the omissions for depth (or for holding the
	// placeholder key), for size or reading cost, and for an input cut
	// short.
	Deep, Big, Cut int
	// Late counts the values whose digest was given up at
	// Limits.Deadline.
	Late int
	// Skimmed counts the values left out because Limits.Deadline passed
	// while they were being measured: the rest of each was only checked as
	// JSON, so its digest is unknown, and the members after it are judged
	// as usual. SkimmedBytes is their size.
	Skimmed, SkimmedBytes int
}

// Bound returns raw with every value that is too big, too deep or too
// costly to read replaced by a placeholder, in time linear in raw and at any
// depth. A placeholder is {Marker: {"bytes": N, "digest": [...]}}: the
// digests of the value it replaces and of each enclosing value below the
// root, so Digest of any of them is still the original's. Values are judged
// outermost first, containers down to Limits.Open are opened rather than
// replaced so their small members (a tool's name beside its big input)
// survive, and when the kept values exceed MaxTotal the largest go. raw
// itself is returned, not copied, when nothing is left out.
//
// With cut, raw is the first part of a longer input: what was complete is
// kept, and what the cut ran through is replaced with unknown digests.
// Otherwise raw must be exactly one JSON value (ErrSyntax, ErrTruncated).
func Bound(raw []byte, cut bool, lim Limits) ([]byte, Report, error) {
	var clk *clock
	if !lim.Deadline.IsZero() {
		clk = &clock{until: lim.Deadline, every: lim.clockEvery}
	}
	ix, err := indexPayload(raw, cut, lim, clk)
	if err != nil {
		return nil, Report{}, err
	}
	b := &bounder{raw: raw, lim: lim, ix: ix, act: make([]action, len(ix.nodes)), digests: map[int]string{}, clock: clk}
	b.decide(0)
	b.budget()
	if !b.changed {
		return raw, Report{}, nil
	}
	out := make([]byte, 0, b.kept+200*len(ix.nodes)+1024)
	return b.write(out, 0), b.rep, nil
}

// node is one value Bound judges: a value at a level it opens down to, or
// the run of members of an opened container past MaxMembers ("rest").
type node struct {
	parent     int
	level      int
	kind       Kind
	rest       bool
	ms, vs, ve int // member start (its key, in an object), value start, value end
	ks, ke     int // the key, in an object
	depth      int // deepest level inside
	work       int64
	bytes      int64 // token bytes inside
	marker     bool  // holds a Marker key inside
	badKey     bool  // its own key is Marker
	cut        bool  // the input ended inside it
	skimmed    bool  // the deadline passed inside it: only checked as JSON from there on
	skimInside bool  // holds a skimmed node
	kids       []int
	restKid    int // its rest node, -1 when none
}

func (n *node) size() int {
	if n.rest {
		return n.ve - n.ms
	}
	return n.ve - n.vs
}

func (n *node) container() bool { return n.kind == ObjectStart || n.kind == ArrayStart }

type payloadIndex struct {
	nodes []node
}

// indexPayload reads raw once, recording the values down to level Open+1
// with the size, depth and reading cost of each. When c runs out inside a
// container, the rest of that container is skimmed: only checked as JSON,
// at the tokenizer's own speed, without measuring it (node.skimmed), so
// that what follows it (the members after a big result) is still recorded.
func indexPayload(raw []byte, cut bool, lim Limits, c *clock) (*payloadIndex, error) {
	t := NewTokenizer(raw)
	ix := &payloadIndex{}
	var open []int // recorded nodes the scan is inside
	keyStart, keyEnd, keyBad := -1, -1, false
	// Only the innermost open node is counted per token; a node's counts
	// pass to its parent when it closes (work relative to the parent's
	// level), so a token costs the same at any depth.
	account := func(level, n int, marker bool) {
		nd := &ix.nodes[open[len(open)-1]]
		nd.depth = max(nd.depth, level)
		nd.work += int64(n) * int64(level-nd.level+1)
		nd.bytes += int64(n)
		nd.marker = nd.marker || marker
	}
	pop := func() {
		c := &ix.nodes[open[len(open)-1]]
		open = open[:len(open)-1]
		if len(open) > 0 {
			p := &ix.nodes[open[len(open)-1]]
			p.depth = max(p.depth, c.depth)
			p.work += c.work + c.bytes*int64(c.level-p.level)
			p.bytes += c.bytes
			p.marker = p.marker || c.marker
			p.skimInside = p.skimInside || c.skimmed || c.skimInside
		}
	}
	start := func(k Kind, s, level int) {
		parent := -1
		if len(open) > 0 {
			parent = open[len(open)-1]
		}
		switch {
		case level == 0:
			ix.nodes = append(ix.nodes, node{parent: -1, kind: k, ms: s, vs: s, ks: -1, ke: -1, depth: level, restKid: -1})
			open = append(open, 0)
		case parent >= 0 && !ix.nodes[parent].rest && ix.nodes[parent].level == level-1 && level-1 <= lim.Open:
			p := &ix.nodes[parent]
			ms := s
			if keyStart >= 0 {
				ms = keyStart
			}
			if len(p.kids) < lim.MaxMembers && len(ix.nodes) < maxNodes && p.restKid < 0 {
				id := len(ix.nodes)
				p.kids = append(p.kids, id)
				ix.nodes = append(ix.nodes, node{parent: parent, level: level, kind: k, ms: ms, vs: s,
					ks: keyStart, ke: keyEnd, badKey: keyBad, depth: level, restKid: -1})
				open = append(open, id)
				break
			}
			if p.restKid < 0 {
				p.restKid = len(ix.nodes)
				ix.nodes = append(ix.nodes, node{parent: parent, level: level, kind: k, rest: true, ms: ms, vs: ms, ks: -1, ke: -1, depth: level, restKid: -1})
			}
			ix.nodes[p.restKid].marker = ix.nodes[p.restKid].marker || keyBad
			open = append(open, p.restKid)
		}
		keyStart, keyEnd, keyBad = -1, -1, false
	}
	end := func(e, level int) {
		if len(open) > 0 {
			if nd := &ix.nodes[open[len(open)-1]]; nd.level == level {
				nd.ve = e
				pop()
			}
		}
	}
	// A skim reads tokens without recording them until the closing
	// bracket at skimLevel: the end of a container below the opened
	// levels, or of an opened container's run of members past
	// MaxMembers (skimRun).
	skim, skimLevel, skimRun, lastEnd := -1, 0, false, 0
	for {
		k, s, e := t.Next()
		if skim < 0 && k != End && len(open) > 0 && c.up() {
			// Out of time: skim the value being read where it is past
			// what Bound judges member by member; the members of opened
			// containers are still recorded, so those after a big value
			// (a call's id after its result) are kept.
			top := open[len(open)-1]
			switch nd := &ix.nodes[top]; {
			case nd.rest || nd.level > lim.Open:
				skim, skimLevel, skimRun = top, nd.level, false
			case nd.restKid >= 0:
				skim, skimLevel, skimRun = nd.restKid, nd.level, true
			}
		}
		if skim >= 0 && k != End {
			if (k != ObjectEnd && k != ArrayEnd) || t.Depth() != skimLevel {
				ix.nodes[skim].skimmed = true
				lastEnd = e
				continue
			}
			// Its closing bracket, read as usual.
			if sn := &ix.nodes[skim]; skimRun && sn.skimmed {
				sn.ve = lastEnd
				ix.nodes[sn.parent].skimInside = true
			}
			skim = -1
		}
		switch k {
		case End:
			switch {
			case t.err == nil && skipSpace(raw, t.i) == len(raw):
				return ix, nil
			case cut && (t.err == ErrTruncated || t.err == nil):
				if len(ix.nodes) == 0 {
					return nil, ErrTruncated
				}
				for len(open) > 0 {
					nd := &ix.nodes[open[len(open)-1]]
					nd.cut, nd.ve = true, len(raw)
					pop()
				}
				if t.err == nil { // trailing input after a complete value
					return nil, ErrSyntax
				}
				return ix, nil
			case t.err == nil:
				return nil, ErrSyntax
			}
			return nil, t.err
		case Key:
			bad := t.Esc && bytes.Contains(raw[s:e], []byte(`\u0000`)) && string(decodeString(nil, raw[s+1:e-1])) == markerText
			account(t.Depth(), e-s, bad)
			keyStart, keyEnd, keyBad = s, e, bad
		case ObjectStart, ArrayStart:
			level := t.Depth() - 1
			start(k, s, level)
			account(level, 1, false)
		case ObjectEnd, ArrayEnd:
			level := t.Depth()
			account(level, 1, false)
			end(e, level)
		default:
			level := t.Depth()
			start(k, s, level)
			account(level, e-s, false)
			if cut && k == Number && e == len(raw) && len(open) > 0 {
				ix.nodes[open[len(open)-1]].cut = true // the number may go on
			}
			end(e, level)
		}
	}
}

type action uint8

const (
	keep action = iota
	open
	replace
)

type bounder struct {
	raw     []byte
	lim     Limits
	ix      *payloadIndex
	act     []action
	changed bool
	kept    int // bytes kept verbatim
	rep     Report
	digests map[int]string
	clock   *clock // the time the digests have; nil: unbounded
}

func (b *bounder) fits(n *node) bool {
	return !n.cut && !n.marker && !n.skimmed && !n.skimInside && n.size() <= b.lim.MaxValue && n.depth <= b.lim.MaxDepth && n.work <= b.lim.MaxWork
}

// decide judges node i and, when it is opened, its members.
func (b *bounder) decide(i int) {
	n := &b.ix.nodes[i]
	switch {
	case i != 0 && b.fits(n):
		b.act[i] = keep
	case n.skimmed:
		// Its members past where the skim began were never recorded.
		b.act[i] = replace
		b.changed = true
	case n.container() && !n.rest && n.level <= b.lim.Open:
		b.act[i] = open
		for _, k := range n.kids {
			if b.ix.nodes[k].badKey {
				b.act[k] = replace
				b.changed = true
				continue
			}
			b.decide(k)
		}
		if n.restKid >= 0 {
			b.decide(n.restKid)
		}
		if n.cut {
			b.changed = true
		}
	case i == 0 && b.fits(n):
		b.act[i] = keep
	default:
		b.act[i] = replace
		b.changed = true
	}
}

// budget replaces the largest kept values until the kept total fits
// MaxTotal.
func (b *bounder) budget() {
	var kept []int
	total := 0
	for i, a := range b.act {
		if a == keep && i != 0 {
			kept = append(kept, i)
			total += b.ix.nodes[i].size()
		}
	}
	b.kept = total
	if total <= b.lim.MaxTotal {
		return
	}
	slices.SortFunc(kept, func(x, y int) int { return b.ix.nodes[y].size() - b.ix.nodes[x].size() })
	for _, i := range kept {
		if total <= b.lim.MaxTotal {
			break
		}
		b.act[i] = replace
		b.changed = true
		total -= b.ix.nodes[i].size()
	}
	b.kept = total
}

// chain lists the digests a placeholder at node i's place carries: node
// i's own ("" for a run of members), then each enclosing value's below the
// root. They are computed together: one canonical pass over the outermost
// not yet digested, the inner ones tapped from the same bytes.
func (b *bounder) chain(i int) []string {
	var path []int // node i, then its enclosing values below the root
	for ; i > 0; i = b.ix.nodes[i].parent {
		path = append(path, i)
	}
	var todo []int // those to digest, outermost first, each inside the one before
	for k := len(path) - 1; k >= 0; k-- {
		j := path[k]
		if _, ok := b.digests[j]; ok {
			continue
		}
		n := &b.ix.nodes[j]
		switch {
		case n.cut || n.rest:
			b.digests[j] = ""
		case n.skimmed:
			b.digests[j] = ""
			b.rep.Late++
		case n.depth-n.level > MaxDigestDepth: // surely past what encoding/json decodes
			b.digests[j] = DigestString(b.raw[n.vs:n.ve])
		default:
			todo = append(todo, j)
		}
	}
	if len(todo) > 0 {
		spans := make([][2]int, len(todo))
		for k, j := range todo {
			spans[k] = [2]int{b.ix.nodes[j].vs, b.ix.nodes[j].ve}
		}
		ds, err := digestChain(b.raw, spans, b.clock)
		for k, j := range todo {
			b.digests[j] = ds[k]
			if err == errLate {
				b.rep.Late++
			}
		}
	}
	ds := make([]string, len(path))
	for k, j := range path {
		ds[k] = b.digests[j]
	}
	return ds
}

// digestChain digests the value at spans[0] of raw and, in the same pass,
// the values at spans[1:], each inside the one before; c bounds the time.
// The digests are "" when the time ran out (errLate) or the reordering
// budget did (errBudget).
func digestChain(raw []byte, spans [][2]int, c *clock) ([]string, error) {
	base := spans[0][0]
	h := newHashBuf()
	for _, sp := range spans[1:] {
		h.taps = append(h.taps, tap{vs: sp[0] - base, ve: sp[1] - base, h: sha256.New()})
	}
	out := make([]string, len(spans))
	switch err := canonical(h, raw[base:spans[0][1]], c); err {
	case nil:
		out[0] = h.sum()
		for k := range h.taps {
			out[k+1] = sumOf(h.taps[k].h)
			if !h.taps[k].seen {
				// Inside a member a later one of the same key replaces:
				// the canonical pass never wrote it.
				sp := spans[k+1]
				out[k+1] = digestBy(raw[sp[0]:sp[1]], c)
			}
		}
	case errBudget, errLate:
		return out, err
	default:
		// Not JSON to the digest (validated, so only nesting past what the
		// digest reads): each value as digestOriginal takes it.
		for k, sp := range spans {
			out[k] = digestOriginal(raw[sp[0]:sp[1]])
		}
	}
	return out, nil
}

// note counts one omission in the report.
func (b *bounder) note(n *node, size int) {
	b.rep.Omitted++
	b.rep.OmittedBytes += size
	switch {
	case n.cut:
		b.rep.Cut++
	case n.skimmed:
		b.rep.Skimmed++
		b.rep.SkimmedBytes += size
	case n.depth > b.lim.MaxDepth || n.marker || n.badKey:
		b.rep.Deep++
	default:
		b.rep.Big++
	}
}

func (b *bounder) write(out []byte, i int) []byte {
	n := &b.ix.nodes[i]
	switch b.act[i] {
	case keep:
		return append(out, b.raw[n.vs:n.ve]...)
	case replace:
		b.note(n, n.size())
		out = append(out, '{')
		out = append(out, markerKey...)
		out = append(out, ':')
		out = appendInfo(out, n.size(), b.chain(i))
		return append(out, '}')
	}
	obj := n.kind == ObjectStart
	if obj {
		out = append(out, '{')
	} else {
		out = append(out, '[')
	}
	first := true
	sep := func() {
		if !first {
			out = append(out, ',')
		}
		first = false
	}
	omitted, dropped := n.cut, 0
	if n.cut {
		b.note(n, 0) // what the cut ran through
	}
	for _, k := range n.kids {
		kn := &b.ix.nodes[k]
		if obj && kn.badKey {
			omitted, dropped = true, dropped+kn.ve-kn.ms
			b.note(kn, kn.ve-kn.ms)
			continue
		}
		sep()
		if obj {
			out = append(out, b.raw[kn.ks:kn.ke]...)
			out = append(out, ':')
		}
		out = b.write(out, k)
	}
	if r := n.restKid; r >= 0 {
		rn := &b.ix.nodes[r]
		switch {
		case b.act[r] == keep:
			sep()
			out = append(out, b.raw[rn.ms:rn.ve]...)
		default:
			omitted, dropped = true, dropped+rn.ve-rn.ms
			b.note(rn, rn.ve-rn.ms)
		}
	}
	if omitted {
		sep()
		if obj {
			// A member in the object's place: it stands at the object's
			// depth, so its chain starts with the object's own digest.
			out = append(out, markerKey...)
			out = append(out, ':')
			out = appendInfo(out, dropped, b.chain(i))
		} else {
			out = append(out, '{')
			out = append(out, markerKey...)
			out = append(out, ':')
			out = appendInfo(out, dropped, append([]string{""}, b.chain(i)...))
			out = append(out, '}')
		}
	}
	if obj {
		return append(out, '}')
	}
	return append(out, ']')
}

func appendInfo(out []byte, size int, chain []string) []byte {
	out = append(out, `{"bytes":`...)
	out = strconv.AppendInt(out, int64(size), 10)
	out = append(out, `,"digest":[`...)
	for j, d := range chain {
		if j > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, d)
	}
	return append(out, "]}"...)
}

// digestOriginal is Digest without looking for placeholders: for a value
// as the agent sent it.
func digestOriginal(raw []byte) string { return digestBy(raw, nil) }

// digestBy is digestOriginal within the time c allows: "" (unknown) past
// it.
func digestBy(raw []byte, c *clock) string {
	h := newHashBuf()
	switch err := canonical(h, raw, c); err {
	case nil:
	case errBudget, errLate:
		return ""
	default:
		h.reset()
		h.quoted(raw, false)
	}
	return h.sum()
}

// placeholderDigest finds the first placeholder in raw's value and returns
// the digest it carries for the value as a whole.
func placeholderDigest(raw []byte) (string, bool) {
	if !bytes.Contains(raw, markerKey) {
		return "", false
	}
	t := NewTokenizer(raw)
	for {
		k, s, e := t.Next()
		switch k {
		case End:
			return "", false
		case Key:
			if !bytes.Equal(raw[s:e], markerKey) {
				continue
			}
			level := t.Depth() - 1 // the object holding the marker
			vs := t.Pos()
			depth := t.Depth()
			for {
				k, _, _ := t.Next()
				if k == End {
					return "", true
				}
				if t.Depth() == depth && k != Key {
					break
				}
			}
			var info struct {
				Digest []string `json:"digest"`
			}
			if json.Unmarshal(raw[vs:t.Pos()], &info) != nil || level >= len(info.Digest) {
				return "", true
			}
			return info.Digest[level], true
		}
	}
}

// Omits reports whether raw's value holds a placeholder: part of it was
// left out by Bound.
func Omits(raw []byte) bool {
	_, ok := placeholderDigest(raw)
	return ok
}
