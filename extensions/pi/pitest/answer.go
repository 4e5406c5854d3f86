package pitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// answer is one scripted completion, written as SSE chunks or as one JSON
// object.
type answer struct {
	id, model, text string
	calls           []ToolCall
	n               int
	promptTokens    int
}

func (a *answer) finish() string {
	if len(a.calls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func (a *answer) completionTokens() int { return len(a.text)/4 + 1 }

func (a *answer) usage() map[string]any {
	return map[string]any{"prompt_tokens": a.promptTokens, "completion_tokens": a.completionTokens(),
		"total_tokens": a.promptTokens + a.completionTokens()}
}

// toolCalls are the answer's calls in OpenAI's form; ids are unique per
// request and call.
func (a *answer) toolCalls(indexed bool) []map[string]any {
	var out []map[string]any
	for i, c := range a.calls {
		args := string(c.Args)
		if args == "" {
			args = "{}"
		}
		tc := map[string]any{"id": fmt.Sprintf("call_%d_%d", a.n, i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": args}}
		if indexed {
			tc["index"] = i
		}
		out = append(out, tc)
	}
	return out
}

// stream writes the answer as server-sent events: the text delta, the tool
// calls, the finish reason, the usage chunk when asked, then [DONE].
func (a *answer) stream(w http.ResponseWriter, withUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	created := time.Now().Unix()
	chunk := func(choices []map[string]any, usage map[string]any) {
		c := map[string]any{"id": a.id, "object": "chat.completion.chunk", "created": created, "model": a.model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := map[string]any{"role": "assistant"}
	if a.text != "" {
		delta["content"] = a.text
	}
	if len(a.calls) > 0 {
		delta["tool_calls"] = a.toolCalls(true)
	}
	chunk([]map[string]any{{"index": 0, "delta": delta, "finish_reason": nil}}, nil)
	chunk([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": a.finish()}}, nil)
	if withUsage {
		chunk([]map[string]any{}, a.usage())
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// json writes the answer as one chat.completion object.
func (a *answer) json(w http.ResponseWriter) {
	msg := map[string]any{"role": "assistant", "content": nil}
	if a.text != "" {
		msg["content"] = a.text
	}
	if len(a.calls) > 0 {
		msg["tool_calls"] = a.toolCalls(false)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": a.id, "object": "chat.completion", "created": time.Now().Unix(), "model": a.model,
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": a.finish()}}, "usage": a.usage()})
}
