// Package wire is the kernel's socket protocol, shared by the kernel and
// its clients: newline-delimited JSON requests and responses over a unix
// socket under the agent root. It deliberately does not import the actor
// system, so the CLI and the run supervisors stay lean.
//
// A request names an operation (ping, status, spawn, message, followups,
// watch, stop) and carries the caller's session, working directory and
// environment, and its parameters: the JSON of the verb layer's typed
// request (package verbs), decoded into that same type by the kernel. A
// batch request carries items; its response carries one result per item, in
// order. watch keeps the connection open and streams one response per
// follow-up.
//
// Follow-ups (watch, followups) are delivered once the client has passed
// them on: a request with Ack set is answered as usual, and the client
// then sends an ack request (AckParams) on the same connection naming
// the follow-ups it printed or forwarded. What it never acknowledges goes
// back to the session's queue when it hangs up, so a client killed
// between the kernel's answer and its own output loses nothing (the next
// reader gets them again). A request without Ack counts what was written
// to the socket as delivered.
//
// Security: the socket is the user's alone. It is created mode 0600 in
// the agent root's tmp/pi-actors (0700); the kernel answers only clients
// running as its own uid (SO_PEERCRED), and a client talks only to a
// kernel running as its own uid — so a socket another user left or
// planted at the fallback path in /tmp receives nothing (ErrDenied).
package wire

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Request is one call to the kernel.
type Request struct {
	ID      int               `json:"id"`
	Op      string            `json:"op"`
	Session string            `json:"session,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	Env     []string          `json:"env,omitempty"`
	Params  json.RawMessage   `json:"params,omitempty"`
	Items   []json.RawMessage `json:"items,omitempty"`
	// Node, on a clustered kernel, is the node whose kernel answers the
	// request ("" or this node: this kernel).
	Node string `json:"node,omitempty"`
	// From is the node a request came from over the cluster; the receiving
	// kernel sets it (a local client's is ignored) and never forwards such
	// a request again.
	From string `json:"from,omitempty"`
	// Home, on a request from another node (From), is the node of the
	// calling session's coordinator — From itself, or the node a run on
	// From was spawned from: a spawned run's follow-ups go there.
	Home string `json:"home,omitempty"`
	// Cause is what made the caller send it (the trace records it with
	// every spawn and message).
	Cause *Cause `json:"cause,omitempty"`
	// Ack (watch, followups): the client acknowledges the follow-ups it
	// passed on with an OpAck request; see the package doc.
	Ack bool `json:"ack,omitempty"`
}

// OpAck is the request a client sends on a watch or followups connection
// (opened with Request.Ack) for the follow-ups it has passed on. It has
// no response.
const OpAck = "ack"

// AckParams are an OpAck request's parameters: follow-up ids.
type AckParams struct {
	IDs []string `json:"ids"`
}

// Cause is what made a spawn or a message happen (seed 002's "triggers"):
// the session, the run it came from (the caller's PI_ACTORS_RUN_ID), the
// message it answers (cause=<message id>), the pi tool call or MCP
// request that made it, the workflow node. A client fills what it knows;
// the kernel adds the session, the run and the node.
type Cause struct {
	Session    string `json:"session,omitempty"`
	Run        string `json:"run,omitempty"`
	Message    string `json:"message,omitempty"`
	ToolCall   string `json:"tool_call,omitempty"`
	MCPRequest string `json:"mcp_request,omitempty"`
	Node       string `json:"node,omitempty"`
}

// Empty reports whether the cause says nothing.
func (c *Cause) Empty() bool { return c == nil || *c == Cause{} }

// Encode sets the request's parameters from a typed request.
func (r *Request) Encode(params any) error {
	if b, ok := marshalFlat(params); ok {
		r.Params = b
		return nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s parameters: %w", r.Op, err)
	}
	r.Params = b
	return nil
}

// Response answers a Request (or one item of a batch).
type Response struct {
	ID      int             `json:"id"`
	OK      bool            `json:"ok"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	Results []Response      `json:"results,omitempty"`
}

// Decode reads the response's result into v (a typed result, or any).
func (r *Response) Decode(v any) error {
	if r.Error != nil {
		return r.Error
	}
	if len(r.Result) == 0 || unmarshalFlat(r.Result, v) {
		return nil
	}
	if err := json.Unmarshal(r.Result, v); err != nil {
		return fmt.Errorf("kernel result: %w", err)
	}
	return nil
}

// Result encodes a typed result for a Response.
func Result(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"encode_error": err.Error()})
	}
	return b
}

// Error is a failed request, with the exit code every front door uses:
// the CLI's --json envelope, the kernel socket and MCP tool errors carry
// the same fields.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	Exit    int    `json:"exit"`
	Details any    `json:"details,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Info is <tmp>/kernel.json: how to reach the running kernel.
type Info struct {
	Pid       int       `json:"pid"`
	PidStart  uint64    `json:"pid_start_time"`
	Socket    string    `json:"socket"`
	StartedAt time.Time `json:"started_at"`
	Version   string    `json:"version"`
}

// TmpDir is <agent>/tmp/pi-actors.
func TmpDir(agentDir string) string { return filepath.Join(agentDir, "tmp", "pi-actors") }

// SocketPath is the kernel socket of an agent root. Unix socket paths are
// limited to 108 bytes; a longer one falls back to a short path in /tmp
// named after the user and a hash of the agent root — fixed, so every
// client of the same root finds it whatever its $TMPDIR.
func SocketPath(agentDir string) string {
	p := filepath.Join(TmpDir(agentDir), "kernel.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(agentDir))
	return fmt.Sprintf("/tmp/pi-actors-%d-%s.sock", os.Getuid(), hex.EncodeToString(sum[:8]))
}

// ErrUnavailable means no kernel answers on the socket.
var ErrUnavailable = errors.New("kernel unavailable")

// Conn is a client connection to the kernel.
type Conn struct {
	c    net.Conn
	r    *bufio.Reader
	next int
}

// Dial connects to the kernel of an agent root.
// Only a kernel running as this user is talked to (ErrDenied otherwise:
// see checkPeer).
func Dial(agentDir string, timeout time.Duration) (*Conn, error) {
	path := SocketPath(agentDir)
	c, err := net.DialTimeout("unix", path, timeout)
	if err != nil {
		return nil, dialError(path, err)
	}
	if err := checkPeer(c, path); err != nil {
		c.Close()
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Call sends a request and reads its response.
func (c *Conn) Call(req Request) (*Response, error) {
	if err := c.Send(req); err != nil {
		return nil, err
	}
	resp, err := c.Read()
	if errors.Is(err, ErrUnavailable) {
		return nil, fmt.Errorf("%w (%w)", err, ErrNoAnswer)
	}
	return resp, err
}

// ErrNoAnswer marks a request the kernel was sent but never answered (it
// ended, or the connection broke): it may have been applied, a batch in
// part.
var ErrNoAnswer = errors.New("the request was sent; the kernel ended before it answered")

// Send writes a request without waiting (for watch).
func (c *Conn) Send(req Request) error {
	c.next++
	req.ID = c.next
	b, err := appendRequest(make([]byte, 0, requestSize(&req)), &req)
	if err != nil {
		return err
	}
	if _, err := c.c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return nil
}

// Ack tells the kernel the follow-ups ids were passed on (a connection
// opened with Request.Ack).
func (c *Conn) Ack(ids ...string) error {
	req := Request{Op: OpAck}
	if err := req.Encode(AckParams{IDs: ids}); err != nil {
		return err
	}
	return c.Send(req)
}

// Read reads the next response.
func (c *Conn) Read() (*Response, error) {
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var resp Response
	if err := decodeResponse(line, &resp); err != nil {
		return nil, fmt.Errorf("kernel response: %w", err)
	}
	return &resp, nil
}
