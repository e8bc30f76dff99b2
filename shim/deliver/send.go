package deliver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Failure classes of one send, deciding what the shipper does next.
const (
	// Retry: network failure, timeout, 5xx, 408, 429: back off and send
	// the same lines (the same ids) again.
	Retry = iota + 1
	// Fatal: 401/403, 426, a wrong URL or content type: stop delivering
	// to this destination and tell the operator.
	Fatal
	// Reject: the destination refused the content (400): the offending
	// line is put aside and delivery continues.
	Reject
	// TooLarge: 413: split the batch.
	TooLarge
)

// SendError is a failed send, classified.
type SendError struct {
	Class  int
	Status int    // HTTP status, 0 for a network failure
	Index  int    // Reject: the failing line's index in the batch, -1 if unknown
	Detail string // Reject: the destination's explanation (may quote content; never logged)
	Err    error
	// RetryAfter is the server's Retry-After, when it gave one.
	RetryAfter time.Duration
}

func (e *SendError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("status %d", e.Status)
}

func (e *SendError) Unwrap() error { return e.Err }

// classOf returns the class of err: a *SendError's, else Retry.
func classOf(err error) int {
	var se *SendError
	if errors.As(err, &se) {
		return se.Class
	}
	return Retry
}

// Sender delivers one batch of log lines (each with its newline) to one
// destination, in order, as one request.
type Sender interface {
	Send(ctx context.Context, lines [][]byte) error
}

// NewSender returns the client for d.
// Whatever client is given, redirects are followed only within d's own
// origin (see NewClient).
func NewSender(d Destination, token string, client *http.Client) Sender {
	client = guarded(client)
	switch d.Kind {
	case OTLP:
		return &OTLPClient{Endpoint: d.Endpoint, Token: token, Client: client, MaxCapture: defaultMaxCapture}
	default:
		return &AEPClient{Endpoint: d.Endpoint, Token: token, Client: client}
	}
}

// maxResponse bounds how much of a response body is read.
const maxResponse = 64 << 10

// post sends one request and classifies a non-2xx answer with classify
// (which sees the status and up to maxResponse bytes of the body).
func post(ctx context.Context, c *http.Client, endpoint, token string, hdr map[string]string, body []byte, classify func(status int, body []byte) *SendError) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: %w", endpoint, err)}
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if errors.Is(err, ErrRedirect) {
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: %w", endpoint, stripURL(err))}
	}
	if err != nil {
		// The URL is ours; the transport's message never carries the token.
		return &SendError{Class: Retry, Err: fmt.Errorf("POST %s: %w", endpoint, stripURL(err))}
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	se := classify(resp.StatusCode, rb)
	if se.Err == nil {
		se.Err = fmt.Errorf("POST %s: %s", endpoint, resp.Status)
	}
	se.Status = resp.StatusCode
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
			se.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return se
}

// stripURL unwraps a *url.Error so the message names the URL once.
func stripURL(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && strings.HasPrefix(err.Error(), "Post ") {
		if inner := u.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// commonClass classifies the statuses both protocols share.
func commonClass(status int, endpoint string) *SendError {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: %d %s: the destination refused the credentials; set --token / AEP_TOKEN to a token it accepts", endpoint, status, http.StatusText(status))}
	case status == http.StatusRequestEntityTooLarge:
		return &SendError{Class: TooLarge}
	case status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500:
		return &SendError{Class: Retry}
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: %d %s: check the destination's base URL", endpoint, status, http.StatusText(status))}
	case status == http.StatusUnsupportedMediaType:
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: 415: the destination does not take this content type", endpoint)}
	}
	return nil
}
