package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The client's side of the protocol encodes its Request and decodes a
// Response without encoding/json's reflection: building the field tables
// of a struct type is paid once per process, and a CLI process sends one
// request (it was a tenth of a millisecond of a spawn's CPU). The bytes
// are those json.Marshal writes, and a response that is not the plain
// shape the kernel writes is decoded by json.Unmarshal, as before.

// appendRequest appends req as json.Marshal(req) encodes it.
func appendRequest(dst []byte, req *Request) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, int64(req.ID), 10)
	dst = append(dst, `,"op":`...)
	dst = appendString(dst, req.Op)
	dst = appendField(dst, "session", req.Session)
	dst = appendField(dst, "cwd", req.Cwd)
	if len(req.Env) > 0 {
		dst = append(dst, `,"env":[`...)
		for i, kv := range req.Env {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, kv)
		}
		dst = append(dst, ']')
	}
	var err error
	if len(req.Params) > 0 {
		dst = append(dst, `,"params":`...)
		if dst, err = appendRaw(dst, req.Params); err != nil {
			return nil, fmt.Errorf("encode %s request: params: %w", req.Op, err)
		}
	}
	if len(req.Items) > 0 {
		dst = append(dst, `,"items":[`...)
		for i, item := range req.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendRaw(dst, item); err != nil {
				return nil, fmt.Errorf("encode %s request: item %d: %w", req.Op, i, err)
			}
		}
		dst = append(dst, ']')
	}
	dst = appendField(dst, "node", req.Node)
	dst = appendField(dst, "from", req.From)
	dst = appendField(dst, "home", req.Home)
	if c := req.Cause; c != nil {
		dst = append(dst, `,"cause":{`...)
		n := len(dst)
		dst = appendField(dst, "session", c.Session)
		dst = appendField(dst, "run", c.Run)
		dst = appendField(dst, "message", c.Message)
		dst = appendField(dst, "tool_call", c.ToolCall)
		dst = appendField(dst, "mcp_request", c.MCPRequest)
		dst = appendField(dst, "node", c.Node)
		if len(dst) > n {
			// The first field's comma.
			dst = append(dst[:n], dst[n+1:]...)
		}
		dst = append(dst, '}')
	}
	if req.Ack {
		dst = append(dst, `,"ack":true`...)
	}
	return append(dst, '}'), nil
}

// appendField appends ,"name":value for a string field tagged omitempty.
func appendField(dst []byte, name, value string) []byte {
	if value == "" {
		return dst
	}
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return appendString(dst, value)
}

// appendRaw appends a json.RawMessage as json.Marshal does: compacted,
// with <, >, & and U+2028/2029 escaped; nil is null; invalid JSON is an
// error.
func appendRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, err
	}
	b := compact.Bytes()
	if !bytes.ContainsAny(b, "<>&\u2028\u2029") {
		return append(dst, b...), nil
	}
	out := bytes.NewBuffer(dst)
	json.HTMLEscape(out, b)
	return out.Bytes(), nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s quoted as encoding/json quotes a string (HTML
// characters escaped, invalid UTF-8 replaced by U+FFFD).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// decodeResponse reads one response line as json.Unmarshal(line, resp)
// does. The shape the kernel writes — an object of the fields id, ok,
// result, error and results (an array of such objects), each at most
// once and spelt as tagged — is read here; anything else goes to
// json.Unmarshal.
func decodeResponse(line []byte, resp *Response) error {
	if !json.Valid(line) {
		return json.Unmarshal(line, resp) // its syntax error
	}
	if rest, ok := readResponse(line, resp); ok && len(skipSpace(rest)) == 0 {
		return nil
	}
	*resp = Response{}
	return json.Unmarshal(line, resp)
}

// readResponse reads one response object at the start of b (valid JSON)
// into resp and returns what follows it; ok is false when the object is
// not of the plain shape (see decodeResponse).
func readResponse(b []byte, resp *Response) (rest []byte, ok bool) {
	b = skipSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	b = skipSpace(b[1:])
	var seen [5]bool
	for len(b) > 0 && b[0] != '}' {
		if b[0] == ',' {
			b = skipSpace(b[1:])
		}
		key, after, ok := readKey(b)
		if !ok {
			return nil, false
		}
		b = skipSpace(after)
		if len(b) == 0 || b[0] != ':' {
			return nil, false
		}
		b = skipSpace(b[1:])
		end := valueEnd(b)
		if end <= 0 {
			return nil, false
		}
		v := b[:end]
		null := string(v) == "null"
		var slot int
		switch key {
		case "id":
			slot = 0
			if !null {
				n, err := strconv.Atoi(string(v))
				if err != nil {
					return nil, false
				}
				resp.ID = n
			}
		case "ok":
			slot = 1
			switch string(v) {
			case "true":
				resp.OK = true
			case "false":
				resp.OK = false
			case "null":
			default:
				return nil, false
			}
		case "result":
			slot = 2
			resp.Result = json.RawMessage(v)
		case "error":
			slot = 3
			if !null {
				var e Error
				if json.Unmarshal(v, &e) != nil {
					return nil, false
				}
				resp.Error = &e
			}
		case "results":
			slot = 4
			if !null {
				results, ok := readResults(v)
				if !ok {
					return nil, false
				}
				resp.Results = results
			}
		default:
			return nil, false
		}
		if seen[slot] {
			return nil, false
		}
		seen[slot] = true
		b = skipSpace(b[end:])
	}
	if len(b) == 0 {
		return nil, false
	}
	return b[1:], true
}

// readResults reads an array of response objects.
func readResults(b []byte) ([]Response, bool) {
	b = skipSpace(b[1:]) // '['
	out := []Response{}
	for len(b) > 0 && b[0] != ']' {
		if b[0] == ',' {
			b = skipSpace(b[1:])
		}
		var r Response
		rest, ok := readResponse(b, &r)
		if !ok {
			return nil, false
		}
		out = append(out, r)
		b = skipSpace(rest)
	}
	return out, len(b) > 0
}

// readKey reads an object key without escapes.
func readKey(b []byte) (key string, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return "", nil, false
	}
	i := bytes.IndexByte(b[1:], '"')
	if i < 0 || bytes.IndexByte(b[1:1+i], '\\') >= 0 {
		return "", nil, false
	}
	return string(b[1 : 1+i]), b[2+i:], true
}

// valueEnd is the length of the JSON value at the start of b (valid
// JSON), or 0.
func valueEnd(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	switch b[0] {
	case '"':
		return stringEnd(b)
	case '{', '[':
		depth := 0
		for i := 0; i < len(b); i++ {
			switch b[i] {
			case '"':
				n := stringEnd(b[i:])
				if n == 0 {
					return 0
				}
				i += n - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return 0
	}
	for i, c := range b {
		if c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return i
		}
	}
	return len(b)
}

// stringEnd is the length of the JSON string at the start of b, or 0.
func stringEnd(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return 0
}

func skipSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}

// requestSize is about the length of req's JSON, to allocate once.
func requestSize(req *Request) int {
	n := 128 + len(req.Op) + len(req.Session) + len(req.Cwd) + len(req.Params) + len(req.Node) + len(req.From) + len(req.Home)
	for _, kv := range req.Env {
		n += len(kv) + 3
	}
	for _, item := range req.Items {
		n += len(item) + 1
	}
	return n
}
