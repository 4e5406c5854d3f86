package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame bounds one inbound JSON-RPC line.
const maxFrame = 16 << 20

// Guarded is a stdio transport that a malformed frame cannot end: a line
// that is not JSON is answered with a JSON-RPC parse error (-32700), a
// JSON value that is not a JSON-RPC 2.0 message with an invalid-request
// error (-32600), and the connection goes on. Every well-formed line
// reaches the SDK unchanged. The JSON-RPC id of each tools/call is kept
// for the call's handler (the cause its spawns and messages record).
func Guarded(in io.ReadCloser, out io.WriteCloser) mcp.Transport {
	w := &lockedWriter{w: out}
	pr, pw := io.Pipe()
	g := &guarded{IOTransport: &mcp.IOTransport{Reader: pr, Writer: w, MaxLineLength: maxFrame}, calls: &callIDs{}}
	go func() {
		pw.CloseWithError(filterFrames(in, pw, w, g.calls))
	}()
	return g
}

// guarded is the guarded stdio transport and the ids of its tool calls.
type guarded struct {
	*mcp.IOTransport
	calls *callIDs
}

// lockedWriter serialises the SDK's writes and the guard's replies, one
// whole line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// filterFrames copies valid JSON-RPC lines from in to pw and answers the
// others on w.
func filterFrames(in io.Reader, pw io.Writer, w io.Writer, calls *callIDs) error {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooBig, err := readFrame(r)
		switch {
		case tooBig:
			w.Write(rpcError(nil, -32600, "Invalid Request: frame too large"))
		case len(line) > 0:
			if reply := check(line); reply != nil {
				w.Write(reply)
			} else {
				calls.note(line)
				// Whitespace around the message is JSON's, but the SDK's
				// decoder refuses a byte after it and ends the connection.
				if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// readFrame reads one line without its surrounding whitespace; a line
// longer than maxFrame is skipped to its end without being kept (tooBig):
// it was read into memory whole before it was refused.
func readFrame(r *bufio.Reader) (line []byte, tooBig bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooBig {
			if len(line)+len(chunk) > maxFrame+2 {
				tooBig, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSpace(line), tooBig, err
	}
}

// check returns the error reply for a line that is not a JSON-RPC 2.0
// message, or nil.
func check(line []byte) []byte {
	if len(line) > maxFrame {
		return rpcError(nil, -32600, "Invalid Request: frame too large")
	}
	var msg struct {
		JSONRPC string           `json:"jsonrpc"`
		ID      *json.RawMessage `json:"id"`
		Method  *string          `json:"method"`
		Result  *json.RawMessage `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		if !json.Valid(bytes.TrimSpace(line)) {
			return rpcError(nil, -32700, "Parse error: "+err.Error())
		}
		return rpcError(nil, -32600, "Invalid Request: not a JSON-RPC object")
	}
	var id json.RawMessage
	if msg.ID != nil {
		id = *msg.ID
		if len(id) == 0 || (id[0] != '"' && !(id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))) {
			return rpcError(nil, -32600, "Invalid Request: id must be a string or an integer")
		}
		if id[0] != '"' && bytes.ContainsAny(id, ".eE") {
			// The SDK would answer 1.5 as 1: a reply the client cannot match.
			return rpcError(nil, -32600, "Invalid Request: id must be a string or an integer (got "+string(id)+")")
		}
		if n, err := strconv.ParseInt(string(id), 10, 64); id[0] != '"' && (err != nil || n > 1<<53 || n < -(1<<53)) {
			// Past 2^53 the SDK's answer carries another id (a float's).
			return rpcError(nil, -32600, "Invalid Request: an integer id must be within ±2^53 (got "+string(id)+"); use a string id")
		}
	} else if bytes.Contains(line, []byte(`"id"`)) && nullID(line) {
		// A request whose id is null would get no answer at all.
		return rpcError(nil, -32600, "Invalid Request: id must be a string or an integer, not null")
	}
	switch {
	case msg.JSONRPC != "2.0":
		return rpcError(id, -32600, `Invalid Request: jsonrpc must be "2.0"`)
	case msg.Method == nil && msg.Result == nil && msg.Error == nil:
		return rpcError(id, -32600, "Invalid Request: no method")
	case msg.Method != nil && *msg.Method == "":
		return rpcError(id, -32600, "Invalid Request: empty method")
	}
	return nil
}

func rpcError(id json.RawMessage, code int, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
	return append(b, '\n')
}

// nullID reports whether a message has "id": null (a pointer decode
// cannot tell it from no id).
func nullID(line []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	v, ok := m["id"]
	return ok && string(bytes.TrimSpace(v)) == "null"
}
