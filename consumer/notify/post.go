package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// SendError is a failed delivery attempt: what went wrong, whether trying
// again can help, and how long the destination asked to be left alone.
// Its message never quotes a URL (a webhook's path is its credential) or
// a response body.
type SendError struct {
	Msg        string
	Permanent  bool
	RetryAfter time.Duration
}

func (e *SendError) Error() string { return e.Msg }

// post sends body to target as contentType. A 2xx answer is success;
// 408, 429 and 5xx and network failures may be retried; other answers
// are permanent (the route is misconfigured).
func post(ctx context.Context, c *http.Client, t httpTarget, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return &SendError{Msg: "the URL does not make a request", Permanent: true}
	}
	for k, v := range t.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "aep-hook-notify")
	resp, err := c.Do(req)
	if err != nil {
		return &SendError{Msg: netProblem(err)}
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return statusError(resp)
}

// statusError is nil for a 2xx answer, else the SendError it stands for.
func statusError(resp *http.Response) error {
	s := resp.StatusCode
	if s >= 200 && s < 300 {
		return nil
	}
	e := &SendError{Msg: fmt.Sprintf("answered %d %s", s, http.StatusText(s))}
	switch {
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && ra > 0 {
			e.RetryAfter = min(time.Duration(ra)*time.Second, 10*time.Minute)
		}
	default:
		e.Permanent = true
	}
	return e
}

// netProblem describes a transport failure without the URL net/http puts
// in its errors.
func netProblem(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within the timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return "request failed: " + err.Error()
}
