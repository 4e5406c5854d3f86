package pitest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Step is one scripted answer.
type Step struct {
	// Model, Prompt and Match are regular expressions a request must match
	// for this step to answer it: its model id, the text of its first user
	// message, and the text of its last message (a user prompt, a tool
	// result, …). Empty matches everything.
	Model  string `json:"model,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	Match  string `json:"match,omitempty"`
	// Text is the assistant's text. "{{last}}" is replaced with the last
	// message's text, "{{prompt}}" with the first user message's, and
	// "{{1}}" … "{{9}}" with Match's capture groups.
	Text string `json:"text,omitempty"`
	// Tools are tool calls the assistant makes (several: in parallel); a
	// step may carry text and tool calls. "{{1}}" … "{{9}}" in a call's
	// args are replaced with Match's capture groups (JSON-escaped), so a
	// call can name an id an earlier tool result printed.
	Tools []ToolCall `json:"tools,omitempty"`
	// Error answers with an HTTP error instead (pi retries 429 and 5xx).
	Error *HTTPError `json:"error,omitempty"`
	// DelayMS waits this long before answering.
	DelayMS int `json:"delayMs,omitempty"`
	// Times is how many requests the step answers: 0 means once, -1 means
	// every request that fits it.
	Times int `json:"times,omitempty"`

	model, prompt, match *regexp.Regexp
	used                 int
}

// ToolCall is one tool call of an answer.
type ToolCall struct {
	Name string `json:"name"`
	// Args is the call's arguments: a JSON object (nil means {}).
	Args json.RawMessage `json:"args,omitempty"`
}

// HTTPError is a scripted failure.
type HTTPError struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// Text returns a step answering with text.
func Text(s string) Step { return Step{Text: s} }

// Call returns a step calling one tool with args (marshalled to JSON).
func Call(name string, args any) Step {
	b, err := json.Marshal(args)
	if err != nil {
		panic(fmt.Sprintf("pitest.Call %s: %v", name, err))
	}
	return Step{Tools: []ToolCall{{Name: name, Args: b}}}
}

// On returns s answering only requests whose last message matches re.
func (s Step) On(re string) Step {
	s.Match = re
	return s
}

// LoadScript reads a script: a JSON array of steps.
func LoadScript(path string) ([]Step, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	var steps []Step
	if err := json.Unmarshal(b, &steps); err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	return steps, nil
}

// compile checks a step and compiles its patterns.
func (s *Step) compile() error {
	var err error
	for _, p := range []struct {
		src string
		re  **regexp.Regexp
	}{{s.Model, &s.model}, {s.Prompt, &s.prompt}, {s.Match, &s.match}} {
		if p.src == "" {
			continue
		}
		if *p.re, err = regexp.Compile(p.src); err != nil {
			return fmt.Errorf("step pattern %q: %w", p.src, err)
		}
	}
	for _, c := range s.Tools {
		if c.Name == "" {
			return fmt.Errorf("step tool call without a name")
		}
		if len(c.Args) > 0 && !json.Valid(c.Args) {
			return fmt.Errorf("step tool call %s: args are not JSON", c.Name)
		}
	}
	if s.Error == nil && s.Text == "" && len(s.Tools) == 0 {
		return fmt.Errorf("step answers nothing: give text, tools or error")
	}
	return nil
}

// fits reports whether the step may answer req.
func (s *Step) fits(req *Request) bool {
	if s.Times >= 0 && s.used >= max(s.Times, 1) {
		return false
	}
	return (s.model == nil || s.model.MatchString(req.Model)) &&
		(s.prompt == nil || s.prompt.MatchString(req.Prompt())) &&
		(s.match == nil || s.match.MatchString(req.Last()))
}

// text is the step's text with its placeholders filled.
func (s *Step) text(req *Request) string {
	pairs := []string{"{{last}}", req.Last(), "{{prompt}}", req.Prompt()}
	for i, g := range s.groups(req) {
		pairs = append(pairs, fmt.Sprintf("{{%d}}", i+1), g)
	}
	return strings.NewReplacer(pairs...).Replace(s.Text)
}

// calls are the step's tool calls with Match's groups filled into their
// args.
func (s *Step) calls(req *Request) []ToolCall {
	groups := s.groups(req)
	if len(groups) == 0 {
		return s.Tools
	}
	var pairs []string
	for i, g := range groups {
		esc, _ := json.Marshal(g)
		pairs = append(pairs, fmt.Sprintf("{{%d}}", i+1), string(esc[1:len(esc)-1]))
	}
	r := strings.NewReplacer(pairs...)
	out := make([]ToolCall, len(s.Tools))
	for i, c := range s.Tools {
		out[i] = ToolCall{Name: c.Name, Args: json.RawMessage(r.Replace(string(c.Args)))}
	}
	return out
}

// groups are Match's capture groups in the last message (at most 9).
func (s *Step) groups(req *Request) []string {
	if s.match == nil {
		return nil
	}
	m := s.match.FindStringSubmatch(req.Last())
	if len(m) < 2 {
		return nil
	}
	return m[1:min(len(m), 10)]
}

// Request is one recorded chat completion request.
type Request struct {
	// N numbers requests from 1 in arrival order.
	N      int    `json:"n"`
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	// Messages are the request's messages as plain text.
	Messages []Message `json:"messages"`
	// Tools are the names of the tools offered.
	Tools []string `json:"tools"`
	// Step is the index of the step that answered (-1: none fitted).
	Step int `json:"step"`
	// Body is the request exactly as pi sent it.
	Body json.RawMessage `json:"body"`
}

// Message is one message of a request, flattened to text: a tool result's
// text, an assistant's text followed by one "call <name> <args>" line per
// tool call.
type Message struct {
	Role string `json:"role"`
	Text string `json:"text"`
	// ToolCallID is set on a tool result.
	ToolCallID string `json:"toolCallId,omitempty"`
}

// Prompt is the text of the first user message.
func (r Request) Prompt() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.Text
		}
	}
	return ""
}

// Last is the text of the last message.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Text
}

// Count is how many times s occurs in the request's messages.
func (r Request) Count(s string) int {
	n := 0
	for _, m := range r.Messages {
		n += strings.Count(m.Text, s)
	}
	return n
}

// HasTool reports whether the request offered the tool name.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}
