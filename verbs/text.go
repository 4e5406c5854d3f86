package verbs

import (
	"encoding/json"
	"strings"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/internal/termtext"
)

var spaces = lazyre.New(`\s+`)

// preview writes whitespace runs as _, escapes every other control
// character (termtext.Visible) and cuts to max characters (the last one
// …): the compact form of a value inside a key=value line.
func preview(s string, max int) string {
	c := termtext.Visible(spaces.ReplaceAllString(s, "_"))
	if r := []rune(c); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return c
}

// nextText renders " next=a|b" (spaces in actions written _), or "".
func nextText(actions []string) string {
	if len(actions) == 0 {
		return ""
	}
	parts := make([]string, len(actions))
	for i, a := range actions {
		parts[i] = spaces.ReplaceAllString(a, "_")
	}
	return " next=" + strings.Join(parts, "|")
}

// compactJSON is one line of JSON without HTML escaping.
func compactJSON(v any) string {
	b, _ := fsutil.MarshalCompact(v)
	return string(b)
}

// prettyJSON is indented JSON without HTML escaping.
func prettyJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
