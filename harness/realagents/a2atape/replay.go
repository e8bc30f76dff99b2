package a2atape

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/aep-hook/aep-hook/adapters/a2a"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// Replay serves the tape to the real channel writing into a fresh AEP
// home under tmp, then checks the whole record (schemas may be nil).
func Replay(t *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
	return realagents.ReplayTape(realagents.TapeServe{
		Server: NewPlayer(t), Vendor: mapping.A2A(), Clock: t.RecordedAt, Facts: t.Facts,
		// The follower's tape ends as the stream closes and a reconnect
		// finds the task ended.
		Channel: "channel", StreamEnds: t.Channel == "follow",
		Run: func(r realagents.TapeRun) error {
			switch t.Channel {
			case "tee":
				replayTee(t, r)
			case "follow":
				replayFollow(t, r)
			default:
				return fmt.Errorf("tape names no known channel %q", t.Channel)
			}
			return nil
		},
	}, tmp, schemas)
}

// replayTee sends the client's recorded requests, in order, through the
// real tee to the player, and checks every answer arrives byte for byte.
func replayTee(t *Tape, r realagents.TapeRun) {
	p := &a2a.Proxy{Upstream: r.Base, Handle: r.Handle, Errors: r.Errors, Nonce: r.Nonce, Instance: "replay"}
	tee := httptest.NewServer(p)
	defer tee.Close()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: time.Minute}
	for i, x := range t.Exchanges {
		req, _ := http.NewRequest(http.MethodPost, tee.URL+x.Path, bytes.NewReader(x.Request))
		req.Header.Set("Content-Type", "application/json")
		if x.Version != "" {
			req.Header.Set("A2A-Version", x.Version)
		}
		resp, err := c.Do(req)
		if err != nil {
			r.Bad("exchange %d (%s): %v", i+1, x.Method, err)
			continue
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			r.Bad("exchange %d (%s): read: %v", i+1, x.Method, err)
		}
		if string(body) != x.Body || resp.StatusCode != x.Status {
			r.Bad("exchange %d (%s): the tee relayed %d %q, the server sent %d %q", i+1, x.Method, resp.StatusCode, body, x.Status, x.Body)
		}
	}
	p.Wait()
}

// replayFollow runs the real follower against the player until the task
// ended (or a minute passed).
func replayFollow(t *Tape, r realagents.TapeRun) {
	path := "/a2a/jsonrpc"
	if len(t.Exchanges) > 0 {
		path = t.Exchanges[0].Path
	}
	f := &a2a.Follower{Endpoint: r.Base.JoinPath(path), Task: t.Task}
	runner := r.Runner("a2a", f)
	runner.Handle = func(ms []mapping.Moment) ([]shim.Result, error) {
		for i := range ms {
			ms[i].Nonce = r.Nonce()
		}
		return r.Handle(ms)
	}
	if !realagents.FollowUntil(runner, f.Done(), time.Minute) {
		r.Bad("the follower never saw the task end")
	}
}
