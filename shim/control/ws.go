package control

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The WebSocket client a held hook speaks to the relay with (RFC 6455, the
// client side only: text messages, ping and close). A hook process lives
// for milliseconds and links only what a firing needs; a WebSocket library
// brings net/http, whose start-up every hook of every agent would pay. This
// one needs only the hashes the binary already links, and on Linux not
// even package net (see dial_linux.go).

// wsGUID is RFC 6455's key suffix.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// Frame opcodes (RFC 6455 §5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// maxHandshake bounds the relay's upgrade response.
const maxHandshake = 16 << 10

// ErrRefused says the relay answered the upgrade with an HTTP status: it
// is there but would not take this connection (a bad token, a foreign
// Host).
var ErrRefused = errors.New("the relay refused the connection")

// wsConn is one client WebSocket connection.
type wsConn struct {
	conn Conn
	br   *bufio.Reader
	wmu  sync.Mutex
	// max bounds one message.
	max int
}

// dialWS connects to a ws:// or wss:// URL with the bearer token, within
// timeout for the connection and the upgrade together; secure speaks TLS
// for wss://.
func dialWS(ctx context.Context, raw, token string, timeout time.Duration, max int, secure Secure) (*wsConn, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("relay URL: %w", err)
	}
	useTLS := false
	switch u.Scheme {
	case "ws":
	case "wss":
		if secure == nil {
			return nil, ErrNoTLS
		}
		useTLS = true
	default:
		return nil, fmt.Errorf("relay URL: scheme %q is not ws or wss", u.Scheme)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if useTLS {
			port = "443"
		}
	}
	deadline := time.Now().Add(timeout)
	c, err := dialTCP(ctx, secure, u.Hostname(), port, deadline)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(deadline)
	if useTLS {
		tc, err := secure.Client(ctx, c, u.Hostname())
		if err != nil {
			c.Close()
			return nil, err
		}
		c = tc
	}
	ws := &wsConn{conn: c, br: bufio.NewReaderSize(c, 4096), max: max}
	if err := ws.handshake(u, token); err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return ws, nil
}

// handshake sends the upgrade request and checks the relay's answer.
func (w *wsConn) handshake(u *url.URL, token string) error {
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", path, u.Host, key)
	if token != "" {
		req.WriteString("Authorization: Bearer " + token + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := w.conn.Write(req.Bytes()); err != nil {
		return err
	}
	status, err := w.line()
	if err != nil {
		return fmt.Errorf("relay handshake: %w", err)
	}
	parts := strings.SplitN(status, " ", 3)
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "HTTP/1.") {
		return errors.New("relay handshake: not an HTTP response")
	}
	if parts[1] != "101" {
		code, _ := strconv.Atoi(parts[1])
		return fmt.Errorf("%w: HTTP %d", ErrRefused, code)
	}
	h := map[string]string{}
	for n := len(status); ; {
		l, err := w.line()
		if err != nil {
			return fmt.Errorf("relay handshake: %w", err)
		}
		if n += len(l); n > maxHandshake {
			return errors.New("relay handshake: response headers too long")
		}
		if l == "" {
			break
		}
		k, v, _ := strings.Cut(l, ":")
		h[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if !strings.EqualFold(h["upgrade"], "websocket") || !strings.Contains(strings.ToLower(h["connection"]), "upgrade") ||
		h["sec-websocket-accept"] != acceptKey(key) {
		return errors.New("relay handshake: not a WebSocket upgrade")
	}
	return nil
}

// acceptKey is the Sec-WebSocket-Accept answering key (RFC 6455 §4.2.2).
func acceptKey(key string) string {
	sum := sha1.Sum([]byte(key + wsGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// line reads one CRLF-terminated header line, bounded.
func (w *wsConn) line() (string, error) {
	var b []byte
	for {
		chunk, more, err := w.br.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > maxHandshake {
			return "", errors.New("header line too long")
		}
		if !more {
			return string(b), nil
		}
	}
}

// writeFrame writes one masked frame (clients mask, RFC 6455 §5.3).
func (w *wsConn) writeFrame(op byte, payload []byte) error {
	var hdr [14]byte
	hdr[0] = 0x80 | op
	n := 2
	switch l := len(payload); {
	case l < 126:
		hdr[1] = 0x80 | byte(l)
	case l <= 0xFFFF:
		hdr[1] = 0x80 | 126
		binary.BigEndian.PutUint16(hdr[2:], uint16(l))
		n = 4
	default:
		hdr[1] = 0x80 | 127
		binary.BigEndian.PutUint64(hdr[2:], uint64(l))
		n = 10
	}
	var mask [4]byte
	rand.Read(mask[:])
	copy(hdr[n:], mask[:])
	n += 4
	buf := make([]byte, n+len(payload))
	copy(buf, hdr[:n])
	for i, c := range payload {
		buf[n+i] = c ^ mask[i&3]
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_, err := w.conn.Write(buf)
	return err
}

// WriteText sends one text message.
func (w *wsConn) WriteText(b []byte) error { return w.writeFrame(opText, b) }

// CloseError is the peer's close frame.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("the relay closed the connection (%d %s)", e.Code, e.Reason)
}

// ReadMessage returns the next data message (its opcode and payload),
// answering pings on the way. A close frame is answered and returned as a
// *CloseError.
func (w *wsConn) ReadMessage() (op byte, msg []byte, err error) {
	op = 0
	for {
		fin, fop, payload, err := w.readFrame()
		if err != nil {
			return 0, nil, err
		}
		switch fop {
		case opPing:
			if err := w.writeFrame(opPong, payload); err != nil {
				return 0, nil, err
			}
			continue
		case opPong:
			continue
		case opClose:
			ce := &CloseError{Code: 1005}
			if len(payload) >= 2 {
				ce.Code = int(binary.BigEndian.Uint16(payload))
				ce.Reason = string(payload[2:])
			}
			w.writeFrame(opClose, payload[:min(len(payload), 2)])
			return 0, nil, ce
		case opContinuation:
			if op == 0 {
				return 0, nil, errors.New("websocket: a continuation with no message")
			}
		case opText, opBinary:
			if op != 0 {
				return 0, nil, errors.New("websocket: a new message inside a fragmented one")
			}
			op = fop
		default:
			return 0, nil, fmt.Errorf("websocket: unknown opcode %d", fop)
		}
		if len(msg)+len(payload) > w.max {
			return 0, nil, fmt.Errorf("websocket: a message larger than %d bytes", w.max)
		}
		msg = append(msg, payload...)
		if fin {
			return op, msg, nil
		}
	}
}

// readFrame reads one frame, bounded by the message limit.
func (w *wsConn) readFrame() (fin bool, op byte, payload []byte, err error) {
	var h [2]byte
	if _, err = io.ReadFull(w.br, h[:]); err != nil {
		return
	}
	fin, op = h[0]&0x80 != 0, h[0]&0x0F
	masked := h[1]&0x80 != 0
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		if _, err = io.ReadFull(w.br, b[:]); err != nil {
			return
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err = io.ReadFull(w.br, b[:]); err != nil {
			return
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if op >= opClose && (n > 125 || !fin) {
		return false, 0, nil, errors.New("websocket: a malformed control frame")
	}
	if n > uint64(w.max) {
		return false, 0, nil, fmt.Errorf("websocket: a frame larger than %d bytes", w.max)
	}
	var mask [4]byte
	if masked {
		if _, err = io.ReadFull(w.br, mask[:]); err != nil {
			return
		}
	}
	payload = make([]byte, n)
	if _, err = io.ReadFull(w.br, payload); err != nil {
		return
	}
	if masked {
		for i := range payload {
			payload[i] ^= mask[i&3]
		}
	}
	return fin, op, payload, nil
}

// Close sends a normal close frame and closes the connection.
func (w *wsConn) Close() error {
	w.conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	w.writeFrame(opClose, []byte{0x03, 0xE8}) // 1000
	return w.conn.Close()
}
