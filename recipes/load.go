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
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/recipes/template"
	"gopkg.in/yaml.v3"
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
	format := "json"
	if strings.HasSuffix(path, ".md") {
		format = "md"
		m, err := parseMarkdown(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		raw = m
	} else {
		v, err := template.DecodeJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: malformed JSON: %v", ErrInvalid, path, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s: JSON recipe must be an object", ErrInvalid, path)
		}
		raw = m
	}
	r, err := compile(raw, path, format)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// parseMarkdown compiles a Markdown recipe: YAML frontmatter between ---
// lines, then the first fenced block whose info string contains recipe,
// template, command or json. Prose is ignored.
func parseMarkdown(data []byte) (map[string]any, error) {
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return nil, fmt.Errorf("%w: Markdown recipe must start with frontmatter (a --- line)", ErrInvalid)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("%w: Markdown recipe frontmatter is not closed (no second --- line)", ErrInvalid)
	}
	raw := map[string]any{}
	front := strings.Join(lines[1:end], "\n")
	if strings.TrimSpace(front) != "" {
		var y any
		if err := yaml.Unmarshal([]byte(front), &y); err != nil {
			return nil, fmt.Errorf("%w: Markdown recipe frontmatter: %v (quote values that start with { or [)", ErrInvalid, err)
		}
		m, ok := fromYAML(y).(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: Markdown recipe frontmatter must be a mapping of key: value", ErrInvalid)
		}
		raw = m
	}
	normalizeFrontmatter(raw)
	info, body, found := firstFence(lines[end+1:])
	if !found {
		if _, ok := raw["template"]; !ok {
			return nil, fmt.Errorf("%w: Markdown recipe has no executable recipe/template fence and no template in its frontmatter", ErrInvalid)
		}
		return raw, nil
	}
	jsonInfo := strings.Contains(info, "json") || strings.Contains(info, "recipe")
	if jsonInfo || strings.HasPrefix(body, "{") || strings.HasPrefix(body, "[") || strings.HasPrefix(body, `"`) {
		v, err := template.DecodeJSON([]byte(body))
		if err != nil {
			if jsonInfo {
				return nil, fmt.Errorf("%w: Markdown recipe %s fence is not valid JSON: %v", ErrInvalid, info, err)
			}
			raw["template"] = body
			return raw, nil
		}
		if obj, ok := v.(map[string]any); ok {
			if _, has := obj["template"]; has {
				for k, val := range obj {
					raw[k] = val
				}
				return raw, nil
			}
		}
		raw["template"] = v
		return raw, nil
	}
	raw["template"] = body
	return raw, nil
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

// fromYAML converts decoded YAML into the JSON value shapes the engine
// uses (json.Number for numbers, map[string]any for mappings).
func fromYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = fromYAML(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = fromYAML(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = fromYAML(e)
		}
		return x
	case int:
		return json.Number(strconv.Itoa(x))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case uint64:
		return json.Number(strconv.FormatUint(x, 10))
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64))
	case time.Time:
		return x.Format(time.RFC3339)
	}
	return v
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
