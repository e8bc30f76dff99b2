package redact

import (
	"strings"
)

// kwIndex is the keyword prefilter: one pass over the input finds every
// case-insensitive occurrence of every rule keyword, and only the rules hit
// run their patterns, in windows around the hits. It is immutable once
// built. It holds no map, so the default table's index can be written out
// as data (kwtable.go) that costs a process nothing to start.
type kwIndex struct {
	first  [256]bool
	second [256][4]uint64 // bit c1 of second[c0]: a keyword starts c0 c1
	entry  []kwEntry      // sorted by their first two bytes, rule order within
	from   [257]int32     // the entries starting with byte c are entry[from[c]:from[c+1]]
}

// kwEntry is one keyword of one rule.
type kwEntry struct {
	kw    string // lower-case
	exact string // the spelling it must match exactly, or ""
	rule  int
}

func pairOf(kw string) uint16 { return uint16(kw[0])<<8 | uint16(kw[1]) }

func newKWIndex(rs []rule) *kwIndex {
	x := &kwIndex{}
	for ri, r := range rs {
		for _, orig := range r.keywords {
			if len(orig) < 2 {
				panic("redact: keyword shorter than 2 bytes in rule " + r.id)
			}
			e := kwEntry{kw: strings.ToLower(orig), rule: ri}
			if r.exact {
				e.exact = orig
			}
			x.entry = append(x.entry, e)
			x.first[e.kw[0]] = true
			x.second[e.kw[0]][e.kw[1]>>6] |= 1 << (e.kw[1] & 63)
		}
	}
	x.entry = sortByPair(x.entry)
	for i, e := range x.entry {
		x.from[int(e.kw[0])+1] = int32(i + 1)
	}
	for c := 1; c < len(x.from); c++ {
		x.from[c] = max(x.from[c], x.from[c-1])
	}
	return x
}

// withPair returns the entries whose keyword starts with c0 c1: a binary
// search for c1 among the entries starting with c0.
func (x *kwIndex) withPair(c0, c1 byte) []kwEntry {
	es := x.entry[x.from[c0]:x.from[int(c0)+1]]
	lo, hi := 0, len(es)
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); es[m].kw[1] < c1 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	j := lo
	for j < len(es) && es[j].kw[1] == c1 {
		j++
	}
	return es[lo:j]
}

// sortByPair sorts entries by their first two bytes, keeping rule order
// among entries of one pair: a stable radix sort, byte by byte from the
// second, in linear time. (A comparison sort cost a hook process that
// redacts more than building the rest of the index.)
func sortByPair(es []kwEntry) []kwEntry {
	tmp := make([]kwEntry, len(es))
	for _, k := range []int{1, 0} {
		var at [257]int
		for _, e := range es {
			at[int(e.kw[k])+1]++
		}
		for i := 1; i < len(at); i++ {
			at[i] += at[i-1]
		}
		for _, e := range es {
			tmp[at[e.kw[k]]] = e
			at[e.kw[k]]++
		}
		es, tmp = tmp, es
	}
	return es
}

// lower maps ASCII letters to lower case and every other byte to itself.
// A constant rather than a table filled in at package initialisation: the
// fill would run, and touch a fresh page, in every process, redacting or
// not (TestLowerTable holds it to its definition).
const lower = "" +
	"\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f" +
	"\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f" +
	"\x20\x21\x22\x23\x24\x25\x26\x27\x28\x29\x2a\x2b\x2c\x2d\x2e\x2f" +
	"0123456789\x3a\x3b\x3c\x3d\x3e\x3f" +
	"\x40abcdefghijklmno" +
	"pqrstuvwxyz\x5b\x5c\x5d\x5e\x5f" +
	"\x60abcdefghijklmno" +
	"pqrstuvwxyz\x7b\x7c\x7d\x7e\x7f" +
	"\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f" +
	"\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f" +
	"\xa0\xa1\xa2\xa3\xa4\xa5\xa6\xa7\xa8\xa9\xaa\xab\xac\xad\xae\xaf" +
	"\xb0\xb1\xb2\xb3\xb4\xb5\xb6\xb7\xb8\xb9\xba\xbb\xbc\xbd\xbe\xbf" +
	"\xc0\xc1\xc2\xc3\xc4\xc5\xc6\xc7\xc8\xc9\xca\xcb\xcc\xcd\xce\xcf" +
	"\xd0\xd1\xd2\xd3\xd4\xd5\xd6\xd7\xd8\xd9\xda\xdb\xdc\xdd\xde\xdf" +
	"\xe0\xe1\xe2\xe3\xe4\xe5\xe6\xe7\xe8\xe9\xea\xeb\xec\xed\xee\xef" +
	"\xf0\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff"

// hit is a keyword occurrence for a scan rule.
type hit struct{ rule, at, kwLen int }

// maxExtend bounds how far a window grows to the end of the token it cuts,
// so one hit in a long token-like run (base64) costs a bounded window.
const maxExtend = 1024

// windows returns, per pattern rule, the merged input ranges its pattern
// must scan, and the keyword hits of the scan rules in input order.
func (x *kwIndex) windows(s string, rs []*rule) (wins [][]span, hits []hit) {
	n := len(s)
	for i := 0; i+1 < n; i++ {
		c0 := lower[s[i]]
		if !x.first[c0] {
			continue
		}
		c1 := lower[s[i+1]]
		if x.second[c0][c1>>6]&(1<<(c1&63)) == 0 {
			continue
		}
		prev, match := "", false
		for _, e := range x.withPair(c0, c1) {
			if e.kw != prev {
				prev, match = e.kw, hasPrefixFold(s[i:], e.kw)
			}
			if !match || e.exact != "" && !strings.HasPrefix(s[i:], e.exact) {
				continue
			}
			if wins == nil {
				wins = make([][]span, len(rs))
			}
			ri := e.rule
			r := rs[ri]
			if r.near != nil && !r.near(s, i) {
				continue
			}
			if r.scan != nil {
				hits = append(hits, hit{ri, i, len(e.kw)})
				continue
			}
			w := span{max(0, i-r.back), min(n, i+len(e.kw)+r.fwd)}
			if r.back == 1 && i > 0 && s[i-1] == '_' {
				// A token inside a name (mcp__gh_ghp_..._create_issue):
				// the window starts at the token, where \b holds.
				w.start = i
			}
			ws := wins[ri]
			if k := len(ws) - 1; k >= 0 && w.start <= ws[k].end {
				ws[k].end = max(ws[k].end, w.end)
			} else {
				wins[ri] = append(ws, w)
			}
		}
	}
	// Extend each window to the end of the token it cuts, then re-merge.
	for ri, ws := range wins {
		out := ws[:0]
		for _, w := range ws {
			for lim := min(n, w.end+maxExtend); w.end < lim && tokenByte(s[w.end]); {
				w.end++
			}
			if k := len(out) - 1; k >= 0 && w.start <= out[k].end {
				out[k].end = max(out[k].end, w.end)
			} else {
				out = append(out, w)
			}
		}
		wins[ri] = out
	}
	return wins, hits
}

// hasPrefixFold reports whether s starts with the lower-case kw, ignoring
// ASCII case.
func hasPrefixFold(s, kw string) bool {
	if len(s) < len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		if lower[s[i]] != kw[i] {
			return false
		}
	}
	return true
}

// tokenByte reports whether c can continue a credential token.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '+' || c == '/' || c == '=' || c == '~' || c == '%'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// homeSpans runs rule (c): the user's own home directory, exactly, as a
// whole prefix at a path boundary. Nothing else is a home: /home/bob for
// alice, /mnt/backup/home/x or /srv/home/www are other paths, and a
// redacted record must never state a different one. A Windows home is
// also found JSON-escaped (C:\\Users\\x), with forward slashes, and in
// any case.
func homeSpans(s, home string) []span {
	if len(home) < 2 {
		return nil
	}
	forms := []string{home}
	fold := false
	if strings.Contains(home, `\`) || len(home) > 2 && home[1] == ':' {
		fold = true
		forms = append(forms, strings.ReplaceAll(home, `\`, `\\`), strings.ReplaceAll(home, `\`, "/"))
	}
	var out []span
	for _, h := range forms {
		hay, needle := s, h
		if fold {
			hay, needle = strings.ToLower(s), strings.ToLower(h)
		}
		for off := 0; ; {
			j := strings.Index(hay[off:], needle)
			if j < 0 {
				break
			}
			st, en := off+j, off+j+len(needle)
			off = en
			if en < len(s) && (keyByte(s[en]) || s[en] == '~') && !sentenceEnd(s, en) {
				continue // /home/alicex, /home/alice.old
			}
			if st > 0 && !homeBoundary(s, st) {
				continue // /mnt/backup/home/alice, /srv/home/alice
			}
			out = append(out, span{st, en})
		}
	}
	return out
}

// sentenceEnd reports whether the byte at i is punctuation ending a
// sentence or a clause ("... in /home/alice."), not part of a name.
func sentenceEnd(s string, i int) bool {
	if c := s[i]; c != '.' && c != ',' && c != ';' && c != ':' && c != '!' && c != '?' {
		return false
	}
	return i+1 == len(s) || isSpace(s[i+1]) || strings.IndexByte(`"')]}`, s[i+1]) >= 0
}

// homeBoundary reports whether a path may start at st: after a blank, a
// quote, a bracket, an operator or a list separator, or right after a
// file:// scheme, never inside another path or name.
func homeBoundary(s string, st int) bool {
	c := s[st-1]
	if c == '/' {
		return st >= 3 && s[st-3:st] == "://" || st >= 5 && strings.EqualFold(s[st-5:st], "file:")
	}
	return !keyByte(c) && c != '\\' && c != '~' && c != '%' && c != '$' && c != '@'
}

// piiSpans runs rule (d): e-mail addresses and phone numbers, by linear
// scans.
func piiSpans(s string) []span {
	var out []span
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '@':
			if sp, ok := emailAt(s, i); ok {
				out = append(out, sp)
				i = sp.end - 1
			}
		case c == '+' || c == '(' || isDigit(c):
			if i > 0 && phoneStop(s[i-1]) {
				continue
			}
			sp, ok, next := phoneAt(s, i)
			if ok {
				out = append(out, sp)
			}
			i = max(i, next-1)
		}
	}
	return out
}

func localByte(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// emailAt recognizes an address around the '@' at i.
func emailAt(s string, at int) (span, bool) {
	st := at
	for st > 0 && at-st < 64 && localByte(s[st-1]) {
		st--
	}
	for st < at && (s[st] == '.' || s[st] == '-') {
		st++
	}
	if st == at || s[st:at] == "git" {
		return span{}, false
	}
	// domain: labels of [A-Za-z0-9-] joined by '.', at least two, last alphabetic >= 2
	i, labels, lastAlpha, lastLen, end := at+1, 0, false, 0, 0
	for i < len(s) && i-at < 256 {
		j := i
		alpha := true
		for j < len(s) && (isAlnum(s[j]) || s[j] == '-') {
			if isDigit(s[j]) || s[j] == '-' {
				alpha = false
			}
			j++
		}
		if j == i {
			break
		}
		labels++
		lastAlpha, lastLen, end = alpha, j-i, j
		if j+1 < len(s) && s[j] == '.' && (isAlnum(s[j+1])) {
			i = j + 1
			continue
		}
		break
	}
	if labels < 2 || !lastAlpha || lastLen < 2 {
		return span{}, false
	}
	return span{st, end}, true
}

// phoneStop reports whether a byte before a digit run makes it part of a
// larger token (an identifier, a version, a path, a hash) rather than the
// start of a phone number.
func phoneStop(c byte) bool {
	return isAlnum(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '+' || c == '#' || c == '$' || c == '\\'
}

// phoneAt recognizes a phone number starting at i: E.164-style "+" numbers
// with 8 to 15 digits, or North American 3-3-4 shapes (optionally 1-3-3-4,
// area code optionally parenthesized). next is where scanning resumes.
func phoneAt(s string, i int) (sp span, ok bool, next int) {
	n := len(s)
	j := i
	plus := s[j] == '+'
	if plus {
		j++
	}
	var glen [8]int
	groups, digits := 0, 0
	parenFirst := false
	for {
		paren := j < n && s[j] == '('
		if paren {
			j++
		}
		st := j
		for j < n && isDigit(s[j]) {
			j++
		}
		l := j - st
		if l == 0 {
			return span{}, false, j
		}
		if paren {
			if j >= n || s[j] != ')' {
				return span{}, false, j
			}
			j++
			if groups == 0 {
				parenFirst = true
			}
		}
		if groups < len(glen) {
			glen[groups] = l
		}
		groups++
		digits += l
		if digits > 15 || groups > 6 {
			for j < n && (isDigit(s[j]) || s[j] == ' ' || s[j] == '-' || s[j] == '.') {
				j++
			}
			return span{}, false, j
		}
		if j+1 < n && (s[j] == ' ' || s[j] == '-' || s[j] == '.') && (isDigit(s[j+1]) || s[j+1] == '(') {
			j++
			continue
		}
		if paren && j < n && s[j] == ' ' && j+1 < n && isDigit(s[j+1]) {
			j++
			continue
		}
		break
	}
	if j < n {
		c := s[j]
		if isAlnum(c) || c == '_' {
			return span{}, false, j
		}
		if (c == '.' || c == '-' || c == ':' || c == '/' || c == ',') && j+1 < n && isDigit(s[j+1]) {
			return span{}, false, j
		}
	}
	g := glen[:min(groups, len(glen))]
	switch {
	case plus:
		ok = digits >= 8 && digits <= 15 && (groups == 1 || g[0] <= 4)
	case !parenFirst && groups == 1:
		ok = false
	default:
		nanp := len(g) == 3 && g[0] == 3 && g[1] == 3 && g[2] == 4
		nanp1 := len(g) == 4 && g[0] == 1 && s[i] == '1' && g[1] == 3 && g[2] == 3 && g[3] == 4
		ok = nanp || nanp1
	}
	return span{i, j}, ok, j
}
