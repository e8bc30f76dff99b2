package follow

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// fakeStream yields scripted reads, then blocks until closed.
type fakeStream struct {
	reads  []read
	closed chan struct{}
	once   sync.Once
}

func (f *fakeStream) Next() (Item, error) {
	if len(f.reads) > 0 {
		r := f.reads[0]
		f.reads = f.reads[1:]
		return r.item, r.err
	}
	<-f.closed
	return Item{}, errors.New("closed")
}

func (f *fakeStream) Close() error { f.once.Do(func() { close(f.closed) }); return nil }

// fakeSource opens its scripted streams in turn and records each catch-up
// cursor.
type fakeSource struct {
	mu       sync.Mutex
	streams  [][]read
	fails    int // connects refused before the first stream
	cursors  []string
	catchups [][]mapping.Moment
}

func (f *fakeSource) Open(ctx context.Context) (Stream, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fails > 0 {
		f.fails--
		return nil, errors.New("connection refused")
	}
	if len(f.streams) == 0 {
		return nil, errors.New("no more streams")
	}
	s := &fakeStream{reads: f.streams[0], closed: make(chan struct{})}
	f.streams = f.streams[1:]
	return s, nil
}

func (f *fakeSource) CatchUp(ctx context.Context, cursor string) ([]mapping.Moment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cursors = append(f.cursors, cursor)
	if len(f.catchups) == 0 {
		return nil, nil
	}
	ms := f.catchups[0]
	f.catchups = f.catchups[1:]
	return ms, nil
}

func ev(key string) read {
	return read{item: Item{Moments: []mapping.Moment{{Raw: []byte(key)}}, Key: key, Cursor: key}}
}

type memCursor struct{ saved []string }

func (m *memCursor) Load() (string, error) { return "c0", nil }
func (m *memCursor) Save(c string) error   { m.saved = append(m.saved, c); return nil }

type recorder struct{ stages []string }

func (r *recorder) Record(f shim.Failure) bool { r.stages = append(r.stages, f.Stage); return true }

func TestRunnerReconnectsCatchesUpAndDedupes(t *testing.T) {
	src := &fakeSource{
		fails: 2,
		streams: [][]read{
			{ev("e1"), ev("e2"), ev("e1"), {item: Item{}}, {err: io.ErrUnexpectedEOF}},
			{ev("e2"), ev("e3"), ev("e4")},
		},
		catchups: [][]mapping.Moment{nil, {{Raw: []byte("caught")}}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []string
	cur := &memCursor{}
	errs := &recorder{}
	r := &Runner{
		Name: "test", Source: src, Errors: errs, Cursor: cur,
		MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		Handle: func(ms []mapping.Moment) ([]shim.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				got = append(got, string(m.Raw))
				if string(m.Raw) == "e4" {
					cancel()
				}
			}
			return make([]shim.Result, len(ms)), nil
		},
	}
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"e1", "e2", "caught", "e3", "e4"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handled %q, want %q", got, want)
	}
	if !reflect.DeepEqual(src.cursors, []string{"c0", "e2"}) {
		t.Errorf("catch-up cursors %q, want the loaded one then the last handled", src.cursors)
	}
	if n := len(cur.saved); n == 0 || cur.saved[n-1] != "e4" {
		t.Errorf("saved cursors %q, want the last to be e4", cur.saved)
	}
	st := r.Stats()
	if st.Connects != 2 || st.Duplicates != 2 || st.CaughtUp != 1 {
		t.Errorf("stats %+v", st)
	}
	if want := []string{"connect", "connect", "read"}; !reflect.DeepEqual(errs.stages, want) {
		t.Errorf("failures %q, want %q", errs.stages, want)
	}
}

func TestRunnerStallReconnects(t *testing.T) {
	src := &fakeSource{streams: [][]read{{ev("a")}, {ev("b")}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	r := &Runner{Source: src, MinBackoff: time.Millisecond, Stall: 20 * time.Millisecond,
		Handle: func(ms []mapping.Moment) ([]shim.Result, error) {
			for _, m := range ms {
				got = append(got, string(m.Raw))
				if string(m.Raw) == "b" {
					cancel()
				}
			}
			return nil, nil
		}}
	r.Run(ctx)
	if !reflect.DeepEqual(got, []string{"a", "b"}) || r.Stats().Connects != 2 {
		t.Fatalf("got %q after %d connects; a silent stream must be replaced", got, r.Stats().Connects)
	}
}

func TestRunnerForgetsKeysOfFailedBatches(t *testing.T) {
	src := &fakeSource{streams: [][]read{{ev("k"), {err: io.EOF}}, {ev("k")}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	r := &Runner{Source: src, MinBackoff: time.Millisecond,
		Handle: func(ms []mapping.Moment) ([]shim.Result, error) {
			calls++
			if calls == 1 {
				return nil, errors.New("disk full")
			}
			cancel()
			return nil, nil
		}}
	r.Run(ctx)
	if calls != 2 {
		t.Fatalf("handled %d times: a redelivered event whose first write failed must be written", calls)
	}
}

func TestFileCursor(t *testing.T) {
	c := FileCursor{Path: filepath.Join(t.TempDir(), "sub", "cur")}
	if got, err := c.Load(); got != "" || err != nil {
		t.Fatalf("empty load: %q %v", got, err)
	}
	if err := c.Save("evt_1"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Load(); got != "evt_1" || err != nil {
		t.Fatalf("load: %q %v", got, err)
	}
}
