package pitest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Model is a scripted OpenAI-compatible chat endpoint.
type Model struct {
	// URL is the base URL pi's models.json takes (http://127.0.0.1:<port>/v1).
	URL string

	srv *http.Server
	ln  net.Listener

	mu       sync.Mutex
	steps    []*Step
	requests []Request
	record   *os.File
}

// StartModel serves the script on a free port of 127.0.0.1.
func StartModel(steps ...Step) (*Model, error) {
	m := &Model{}
	if err := m.Add(steps...); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scripted model: %w", err)
	}
	m.ln = ln
	m.URL = "http://" + ln.Addr().String() + "/v1"
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", m.complete)
	mux.HandleFunc("GET /v1/models", m.models)
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(m.Requests())
	})
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	return m, nil
}

// Add appends steps to the script.
func (m *Model) Add(steps ...Step) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range steps {
		s := steps[i]
		if err := s.compile(); err != nil {
			return fmt.Errorf("scripted model: step %d: %w", len(m.steps), err)
		}
		m.steps = append(m.steps, &s)
	}
	return nil
}

// Record appends every later request to path as one JSON line.
func (m *Model) Record(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("scripted model record: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.record != nil {
		m.record.Close()
	}
	m.record = f
	return nil
}

// Requests returns the requests recorded so far, in arrival order.
func (m *Model) Requests() []Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Request(nil), m.requests...)
}

// Unused lists the steps that answered fewer requests than they should
// (Times > 0) or none at all (Times 0): a test's script that pi never
// reached.
func (m *Model) Unused() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int
	for i, s := range m.steps {
		if (s.Times == 0 && s.used == 0) || (s.Times > 0 && s.used < s.Times) {
			out = append(out, i)
		}
	}
	return out
}

// Close stops serving.
func (m *Model) Close() error {
	err := m.srv.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.record != nil {
		m.record.Close()
		m.record = nil
	}
	return err
}

func (m *Model) models(w http.ResponseWriter, _ *http.Request) {
	m.mu.Lock()
	seen := map[string]bool{}
	var data []map[string]any
	for _, s := range m.steps {
		if s.Model != "" && !seen[s.Model] {
			seen[s.Model] = true
			data = append(data, map[string]any{"id": s.Model, "object": "model", "owned_by": "pitest"})
		}
	}
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// complete answers one chat completion request.
func (m *Model) complete(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req, usage, err := parse(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "scripted model: "+err.Error())
		return
	}
	step := m.choose(req)
	if step == nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("scripted model: no step fits request %d (last message: %.200q)", req.N, req.Last()))
		return
	}
	if step.DelayMS > 0 {
		select {
		case <-time.After(time.Duration(step.DelayMS) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if step.Error != nil {
		writeError(w, step.Error.Status, step.Error.Message)
		return
	}
	a := answer{id: fmt.Sprintf("chatcmpl-%d", req.N), model: req.Model, text: step.text(req), calls: step.calls(req), n: req.N,
		promptTokens: len(body) / 4}
	if req.Stream {
		a.stream(w, usage)
		return
	}
	a.json(w)
}

// choose picks and uses up the step that answers req, recording req.
func (m *Model) choose(req *Request) *Step {
	m.mu.Lock()
	defer m.mu.Unlock()
	req.N = len(m.requests) + 1
	req.Step = -1
	var chosen *Step
	for i, s := range m.steps {
		if s.fits(req) {
			s.used++
			req.Step, chosen = i, s
			break
		}
	}
	m.requests = append(m.requests, *req)
	if m.record != nil {
		if b, err := json.Marshal(req); err == nil {
			m.record.Write(append(b, '\n'))
		}
	}
	return chosen
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "pitest", "code": status}})
}

// chatRequest is the part of an OpenAI chat completion request we read.
type chatRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

// parse decodes a request body into a Request; usage reports whether the
// client asked for a usage chunk.
func parse(body []byte) (*Request, bool, error) {
	var cr chatRequest
	if err := json.Unmarshal(body, &cr); err != nil {
		return nil, false, fmt.Errorf("request body: %w", err)
	}
	if len(cr.Messages) == 0 {
		return nil, false, errors.New("request has no messages")
	}
	req := &Request{Model: cr.Model, Stream: cr.Stream, Body: json.RawMessage(body), Tools: []string{}}
	for _, t := range cr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for _, msg := range cr.Messages {
		text := contentText(msg.Content)
		for _, c := range msg.ToolCalls {
			text += fmt.Sprintf("\ncall %s %s", c.Function.Name, c.Function.Arguments)
		}
		req.Messages = append(req.Messages, Message{Role: msg.Role, Text: strings.TrimPrefix(text, "\n"), ToolCallID: msg.ToolCallID})
	}
	return req, cr.StreamOptions != nil && cr.StreamOptions.IncludeUsage, nil
}

// contentText flattens a message content: a string, or an array of parts
// whose text parts are joined by newlines.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}
