package recipes

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"gopkg.in/yaml.v3"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// library is the packaged standard library, shipped inside the binary.
//
//go:embed library/*.json
var library embed.FS

// pkgPrefix marks paths inside the packaged library.
const pkgPrefix = "pkg:"

// IsPackaged reports whether path names a packaged recipe.
func IsPackaged(path string) bool { return strings.HasPrefix(path, pkgPrefix) }

// readFile reads a recipe file (an OS path or a pkg: path), refusing files
// over MaxFileBytes before reading them.
func readFile(path string) ([]byte, error) {
	if IsPackaged(path) {
		data, err := library.ReadFile("library/" + strings.TrimPrefix(path, pkgPrefix))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNotFound, path)
		}
		return data, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read recipe %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read recipe %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrInvalid, path)
	}
	if st.Size() > MaxFileBytes {
		return nil, fmt.Errorf("%w: recipe file exceeds size limit %d bytes: %s", ErrInvalid, MaxFileBytes, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read recipe %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: recipe file exceeds size limit %d bytes: %s", ErrInvalid, MaxFileBytes, path)
	}
	return data, nil
}

// Load reads and compiles one recipe file. Errors wrap ErrNotFound or
// ErrInvalid and name the file.
func Load(path string) (*Recipe, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse compiles recipe file content; the format follows the extension
// (.md is Markdown, anything else JSON).
func Parse(data []byte, path string) (*Recipe, error) {
	var raw map[string]any
	var order []string
	format := "json"
	if strings.HasSuffix(path, ".md") {
		format = "md"
		m, o, err := parseMarkdown(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		raw, order = m, o
	} else {
		v, err := template.DecodeJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: malformed JSON: %v", ErrInvalid, path, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s: JSON recipe must be an object", ErrInvalid, path)
		}
		raw, order = m, keyOrder(data, "imports")
	}
	r, err := compile(raw, path, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.ImportOrder = order
	return r, nil
}

// keyOrder returns, in written order, the keys of the object under key in
// a JSON document's top-level object (Go maps forget order; imports are
// walked in declaration order).
func keyOrder(data []byte, key string) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil
		}
		if k, _ := t.(string); k != key {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil
		}
		var out []string
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return out
			}
			k, _ := t.(string)
			out = append(out, k)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return out
			}
		}
		return out
	}
	return nil
}

// parseMarkdown compiles a Markdown recipe: YAML frontmatter between ---
// lines, then the first fenced block whose info string contains recipe,
// template, command or json. Prose is ignored.
func parseMarkdown(data []byte) (map[string]any, []string, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, nil, fmt.Errorf("%w: Markdown recipe must start with frontmatter (a --- line)", ErrInvalid)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, nil, fmt.Errorf("%w: Markdown recipe frontmatter is not closed (no second --- line)", ErrInvalid)
	}
	raw := map[string]any{}
	var order []string
	front := strings.Join(lines[1:end], "\n")
	if strings.TrimSpace(front) != "" {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
			return nil, nil, fmt.Errorf("%w: Markdown recipe frontmatter is not valid YAML: %v (quote values that start with {, [, ', \" or contain \": \")", ErrInvalid, err)
		}
		v, err := fromYAML(&doc)
		if err != nil {
			return nil, nil, err
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("%w: Markdown recipe frontmatter must be a mapping of key: value", ErrInvalid)
		}
		raw, order = m, yamlKeyOrder(&doc, "imports")
	}
	normalizeFrontmatter(raw)
	info, body, found := firstFence(lines[end+1:])
	if !found {
		if _, ok := raw["template"]; !ok {
			return nil, nil, fmt.Errorf("%w: Markdown recipe has no executable recipe/template fence and no template in its frontmatter", ErrInvalid)
		}
		return raw, order, nil
	}
	jsonInfo := strings.Contains(info, "json") || strings.Contains(info, "recipe")
	if jsonInfo || strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") || strings.HasPrefix(body, `"`) {
		v, err := template.DecodeJSON([]byte(body))
		if err != nil {
			if jsonInfo {
				return nil, nil, fmt.Errorf("%w: Markdown recipe %s fence is not valid JSON: %v", ErrInvalid, info, err)
			}
			raw["template"] = body
			return raw, order, nil
		}
		if obj, ok := v.(map[string]any); ok {
			if _, has := obj["template"]; has {
				for k, val := range obj {
					raw[k] = val
				}
				if o := keyOrder([]byte(body), "imports"); len(o) > 0 {
					order = o
				}
				return raw, order, nil
			}
		}
		raw["template"] = v
		return raw, order, nil
	}
	raw["template"] = body
	return raw, order, nil
}

// normalizeFrontmatter accepts the shorthand forms: args as a comma string
// stays as is (the template engine splits it), defaults as a list of
// single-key mappings becomes one object.
func normalizeFrontmatter(raw map[string]any) {
	if list, ok := raw["defaults"].([]any); ok {
		obj := map[string]any{}
		for _, e := range list {
			switch x := e.(type) {
			case map[string]any:
				for k, v := range x {
					obj[k] = v
				}
			case string:
				if k, v, ok := strings.Cut(x, ":"); ok {
					obj[strings.TrimSpace(k)] = strings.TrimSpace(v)
				} else if k, v, ok := strings.Cut(x, "="); ok {
					obj[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
		}
		raw["defaults"] = obj
	}
}

// firstFence finds the first fenced block (``` or ~~~) whose lowercased
// info string names an executable block; the body is trimmed.
func firstFence(lines []string) (info, body string, found bool) {
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		marker := fenceMarker(trimmed)
		if marker == "" {
			continue
		}
		inf := strings.ToLower(strings.TrimSpace(trimmed[len(marker):]))
		var content []string
		j := i + 1
		for ; j < len(lines); j++ {
			t := strings.TrimSpace(lines[j])
			if strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == "" {
				break
			}
			content = append(content, lines[j])
		}
		if strings.Contains(inf, "recipe") || strings.Contains(inf, "template") || strings.Contains(inf, "command") || strings.Contains(inf, "json") {
			return inf, strings.TrimSpace(strings.Join(content, "\n")), true
		}
		i = j
	}
	return "", "", false
}

func fenceMarker(s string) string {
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(s) && s[n] == c {
			n++
		}
		if n >= 3 {
			return s[:n]
		}
	}
	return ""
}

// fromYAML converts a YAML node into the JSON value shapes the engine
// uses. Scalars keep their text where JSON has no equal: timestamps, octal
// or hex integers and the like stay strings exactly as written; decimal
// numbers become json.Number; true/false and null are themselves.
func fromYAML(n *yaml.Node) (any, error) {
	budget := yamlBudget
	return convertYAML(n, 0, &budget)
}

// yamlBudget bounds the nodes a frontmatter expands to (aliases can
// multiply a small document); yamlDepth bounds nesting (and alias cycles).
const (
	yamlBudget = 100000
	yamlDepth  = 64
)

func convertYAML(n *yaml.Node, depth int, budget *int) (any, error) {
	*budget--
	if depth > yamlDepth || *budget < 0 {
		return nil, fmt.Errorf("%w: Markdown recipe frontmatter nests too deep or expands too much (aliases)", ErrInvalid)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return convertYAML(n.Content[0], depth+1, budget)
	case yaml.AliasNode:
		return convertYAML(n.Alias, depth+1, budget)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := convertYAML(n.Content[i+1], depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := convertYAML(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return scalarYAML(n), nil
}

func scalarYAML(n *yaml.Node) any {
	switch n.Tag {
	case "!!null":
		if n.Value == "~" {
			return "~"
		}
		return nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true":
			return true
		case "false":
			return false
		}
	case "!!int", "!!float":
		if jsonNumberRe.MatchString(n.Value) {
			return json.Number(n.Value)
		}
	}
	return n.Value
}

var jsonNumberRe = lazyre.New(`^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$`)

// yamlKeyOrder returns the keys of the mapping under key, in written order.
func yamlKeyOrder(doc *yaml.Node, key string) []string {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == key && doc.Content[i+1].Kind == yaml.MappingNode {
			var out []string
			for j := 0; j < len(doc.Content[i+1].Content); j += 2 {
				out = append(out, doc.Content[i+1].Content[j].Value)
			}
			return out
		}
	}
	return nil
}

// jsonBytes renders a raw value as compact JSON (for fingerprints and
// records).
func jsonBytes(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
