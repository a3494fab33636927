// Package stomptest is a minimal STOMP-over-WebSocket client for tests and the load
// generator: enough to connect, subscribe and read frames, nothing more.
package stomptest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fasthttp/websocket"

	"github.com/taskweave/taskweave/api/stomp"
)

// Client is one connection. Read from one goroutine at a time.
type Client struct {
	Conn *websocket.Conn
	// Protocol is the negotiated WebSocket subprotocol ("" when none).
	Protocol string
	dec      *stomp.Decoder
	pending  []stomp.Frame
	beats    atomic.Int64
	receipts int
}

// Dial opens a WebSocket to url (ws://host/ws-stomp) offering protocols (none when
// empty).
func Dial(ctx context.Context, url string, protocols ...string) (*Client, error) {
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, Subprotocols: protocols}
	conn, resp, err := d.DialContext(ctx, url, http.Header{})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (status %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	return &Client{Conn: conn, Protocol: conn.Subprotocol(), dec: stomp.NewDecoder(stomp.Limits{MaxFrame: 1 << 20})}, nil
}

// Close drops the connection.
func (c *Client) Close() error { return c.Conn.Close() }

// Send writes one frame as one WebSocket message.
func (c *Client) Send(f stomp.Frame) error { return c.SendRaw(f.Bytes()) }

// SendRaw writes bytes as one WebSocket message.
func (c *Client) SendRaw(b []byte) error {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.Conn.WriteMessage(websocket.TextMessage, b)
}

// HeartBeats is how many bare heart-beat messages Read has skipped.
func (c *Client) HeartBeats() int64 { return c.beats.Load() }

// Read returns the next frame, skipping heart-beats; an error when none comes within
// timeout or the connection closes.
func (c *Client) Read(timeout time.Duration) (stomp.Frame, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(timeout))
	for len(c.pending) == 0 {
		_, data, err := c.Conn.ReadMessage()
		if err != nil {
			return stomp.Frame{}, err
		}
		if len(bytes.Trim(data, "\r\n")) == 0 {
			c.beats.Add(1)
			continue
		}
		frames, err := c.dec.Feed(data)
		if err != nil {
			return stomp.Frame{}, err
		}
		c.pending = append(c.pending, frames...)
	}
	f := c.pending[0]
	c.pending = c.pending[1:]
	return f, nil
}

// ErrUnexpected is a reply of the wrong command (typically ERROR).
var ErrUnexpected = errors.New("stomptest: unexpected frame")

// Expect reads one frame and fails unless its command is want; the frame is returned
// either way.
func (c *Client) Expect(want string, timeout time.Duration) (stomp.Frame, error) {
	f, err := c.Read(timeout)
	if err != nil {
		return f, err
	}
	if f.Command != want {
		return f, fmt.Errorf("%w: %s (message %q), want %s", ErrUnexpected, f.Command, f.Value("message"), want)
	}
	return f, nil
}

// Connect sends CONNECT with the bearer token and heart-beat ("0,0" when empty) and
// reads the reply.
func (c *Client) Connect(token, heartBeat string) (stomp.Frame, error) {
	if heartBeat == "" {
		heartBeat = "0,0"
	}
	f := stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{
		{Name: "accept-version", Value: "1.2"}, {Name: "host", Value: "taskweave"},
		{Name: "heart-beat", Value: heartBeat}, {Name: "Authorization", Value: "Bearer " + token},
	}}
	if err := c.Send(f); err != nil {
		return stomp.Frame{}, err
	}
	return c.Expect("CONNECTED", 10*time.Second)
}

// Subscribe subscribes with a receipt and waits for it: afterwards every message that
// commits reaches this client.
func (c *Client) Subscribe(id, destination string) (stomp.Frame, error) {
	c.receipts++
	receipt := "sub-" + strconv.Itoa(c.receipts)
	err := c.Send(stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{
		{Name: "id", Value: id}, {Name: "destination", Value: destination}, {Name: "receipt", Value: receipt},
	}})
	if err != nil {
		return stomp.Frame{}, err
	}
	f, err := c.Expect("RECEIPT", 10*time.Second)
	if err == nil && f.Value("receipt-id") != receipt {
		err = fmt.Errorf("%w: receipt %q, want %q", ErrUnexpected, f.Value("receipt-id"), receipt)
	}
	return f, err
}
