package deliver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/tidwall/gjson"
)

// Lag is how far one destination is behind the local logs.
type Lag struct {
	Status
	Logs   int   // logs with undelivered lines
	Events int64 // undelivered lines
	Bytes  int64 // undelivered bytes
	// Oldest is the time of the oldest undelivered event ("" when none).
	Oldest string
}

// KnownDestinations returns dests plus every destination that has left a
// status in home, so a report covers what was shipped to before even when
// --out is not given now.
func KnownDestinations(home string, dests []Destination) []Destination {
	out := append([]Destination(nil), dests...)
	seen := map[string]bool{}
	for _, d := range dests {
		seen[d.Raw] = true
	}
	ents, _ := os.ReadDir(filepath.Join(home, "cursors"))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(home, "cursors", e.Name(), "status.json"))
		if err != nil {
			continue
		}
		var st Status
		if json.Unmarshal(b, &st) != nil || seen[st.Destination] {
			continue
		}
		if d, err := ParseDestination(st.Destination); err == nil && d.Key() == e.Name() {
			seen[d.Raw] = true
			out = append(out, d)
		}
	}
	return out
}

// Report measures, for each destination, the undelivered part of every log
// under the shipper's root: it reads cursors and the logs' undelivered
// tails, and takes no locks (a report is a snapshot).
func (s *Shipper) Report() ([]Lag, error) {
	logs, err := s.Logs()
	if err != nil {
		return nil, fmt.Errorf("list logs: %w", err)
	}
	out := make([]Lag, 0, len(s.Dests))
	for _, d := range s.Dests {
		lag := Lag{Status: ReadStatus(s.Home, d)}
		for _, rel := range logs {
			n, b, oldest, err := s.behind(d, rel)
			if err != nil || b == 0 {
				continue
			}
			lag.Logs++
			lag.Events += n
			lag.Bytes += b
			if oldest != "" && (lag.Oldest == "" || olderThan(oldest, lag.Oldest)) {
				lag.Oldest = oldest
			}
		}
		out = append(out, lag)
	}
	return out, nil
}

func olderThan(a, b string) bool {
	ta, ea := time.Parse(time.RFC3339Nano, a)
	tb, eb := time.Parse(time.RFC3339Nano, b)
	if ea != nil || eb != nil {
		return a < b
	}
	return ta.Before(tb)
}

// behind counts the whole undelivered lines of one log for d.
func (s *Shipper) behind(d Destination, rel string) (events, bytesN int64, oldest string, err error) {
	f, err := os.Open(filepath.Join(s.LogRoot, filepath.FromSlash(rel)))
	if err != nil {
		return 0, 0, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, "", err
	}
	curPath, _ := cursorPaths(s.Home, d, rel)
	off, _, err := resume(loadCursor(curPath), f, fi.Size())
	if err != nil || off >= fi.Size() {
		return 0, 0, "", err
	}
	lr := newLineReader(f, off, fi.Size(), orDefault(s.MaxLine, DefaultMaxLine))
	for {
		line, _, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil && err != errTooLong {
			return events, bytesN, oldest, err
		}
		if len(bytes.TrimSpace(line)) == 0 && err == nil {
			continue
		}
		if oldest == "" && err == nil {
			t := gjson.GetBytes(line, "time").String()
			if t != "" {
				oldest = t
			}
		}
		events++
	}
	return events, lr.off - off, oldest, nil
}

// SortLags orders a report by destination.
func SortLags(l []Lag) {
	sort.Slice(l, func(i, j int) bool { return l[i].Destination < l[j].Destination })
}
