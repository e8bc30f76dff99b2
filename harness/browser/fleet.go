package browser

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// FleetHost and FleetAgent name the machine and agent of every session
// Fleet writes: an emitter token for FleetHost/FleetAgent may post them.
const (
	FleetHost  = "devbox"
	FleetAgent = "claude-code"
)

// Fleet is the synthetic large fleet the console's first render is
// measured on: sessions sessions of perSession metadata events each (a
// run of Bash calls), every tenth waiting for a human, the other even
// ones ended, the odd ones running. It returns the event lines in batches
// the relay's POST /events takes, and how many sessions end in each state
// as the fleet view labels them.
func Fleet(sessions, perSession int) (batches [][]string, want map[string]int) {
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	want = map[string]int{}
	var batch []string
	for i := range sessions {
		s := fmt.Sprintf("s%04d", i)
		at := base.Add(time.Duration(i) * time.Second)
		ev := func(seq int, typ, rest string) string {
			at = at.Add(time.Millisecond)
			return fmt.Sprintf(`{"aep":"0.1","id":"%s-%06d","type":%q,"time":%q,"source":"aep://%s/agent/%s/session/%s","agent":%q,"session":%q,"seq":%d,"epoch":0,%s}`,
				s, seq, typ, at.Format("2006-01-02T15:04:05.000Z"), FleetHost, FleetAgent, s, FleetAgent, s, seq, rest)
		}
		batch = append(batch,
			ev(0, "session.started", `"capture":"metadata","data":{}`),
			ev(1, "run.started", `"run":"r1","capture":"metadata","data":{"trigger":"user"}`))
		seq := 2
		for seq < perSession-2 {
			call := fmt.Sprintf(`"run":"r1","subject":"Bash","capture":"metadata","data":{"tool":{"name":"Bash","call_id":"c%d"}}`, seq)
			batch = append(batch, ev(seq, "tool.requested", call), ev(seq+1, "tool.completed", call))
			seq += 2
		}
		switch {
		case i%10 == 0:
			batch = append(batch,
				ev(seq, "progress.status", `"run":"r1","capture":"metadata","data":{}`),
				ev(seq+1, "attention.requested", `"run":"r1","subject":"Bash","capture":"metadata","severity":"notice","data":{"kind":"permission","respond_via":["control"],"options":[{"id":"allow"},{"id":"deny"}]}`))
			want["waiting for a human"]++
		case i%2 == 0:
			batch = append(batch,
				ev(seq, "run.finished", `"run":"r1","capture":"metadata","data":{}`),
				ev(seq+1, "session.ended", `"capture":"metadata","data":{}`))
			want["ended"]++
		default:
			batch = append(batch,
				ev(seq, "progress.status", `"run":"r1","capture":"metadata","data":{}`),
				ev(seq+1, "progress.status", `"run":"r1","capture":"metadata","data":{}`))
			want["running"]++
		}
		if len(batch) >= 5000 {
			batches = append(batches, batch)
			batch = nil
		}
	}
	if len(batch) > 0 {
		batches = append(batches, batch)
	}
	return batches, want
}

// Post sends event lines to the relay at base (http://host:port) as one
// NDJSON batch under an emitter token.
func Post(base, token string, lines []string) error {
	req, err := http.NewRequest("POST", base+"/events", strings.NewReader(strings.Join(lines, "\n")+"\n"))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	req.Header.Set("AEP-Version", "0.1")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("post events: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("post events: %d %s", resp.StatusCode, b)
	}
	return nil
}

// FirstRender opens the console at base signed in with token and waits
// for its first whole render of the fleet. It returns the page's timing
// (milliseconds after navigation start: fleetComplete, synced, and
// completeRows, the rows that render listed).
func FirstRender(ctx context.Context, base, token string) (map[string]float64, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/?access_token="+token)); err != nil {
		return nil, fmt.Errorf("open the console: %w", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.aepConsole && window.aepConsole.timing.fleetComplete !== undefined)`,
		chromedp.WithPollingInterval(10*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		return nil, fmt.Errorf("waiting for the fleet's first render: %w", err)
	}
	tm, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`window.aepConsole.timing`))
	if err != nil {
		return nil, fmt.Errorf("the console's timing: %w", err)
	}
	return tm, nil
}

// BareFetch is the browser's own cost of the console's first load: a page
// of the relay's origin (its /healthz) fetches the same replay (GET
// /stream, everything, no live tail) and only counts its events. It
// returns the milliseconds it took and the events counted.
func BareFetch(ctx context.Context, base string) (took float64, events int, err error) {
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/healthz")); err != nil {
		return 0, 0, err
	}
	res, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](bareFetch, chromedp.EvalAwaitPromise))
	if err != nil {
		return 0, 0, err
	}
	return res["took"], int(res["events"]), nil
}

const bareFetch = `(async () => {
  const t0 = performance.now();
  const resp = await fetch('/stream?live=0&from=all', {credentials: 'same-origin', cache: 'no-store'});
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let events = 0, rest = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) break;
    const lines = (rest + value).split('\n');
    rest = lines.pop();
    for (const l of lines) if (l.startsWith('data: ')) events++;
  }
  return {events, took: performance.now() - t0};
})()`

// GoFetch is the relay's own cost of the same replay: a Go client reads
// GET /stream (everything, no live tail) under token and counts its
// events.
func GoFetch(base, token string) (time.Duration, int, error) {
	start := time.Now()
	req, err := http.NewRequest("GET", base+"/stream?live=0&from=all", nil)
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("GET /stream: %d", resp.StatusCode)
	}
	n := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte("data: ")) {
			n++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("reading /stream: %w", err)
	}
	return time.Since(start), n, nil
}
