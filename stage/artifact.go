package stage

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/verbs"
)

// Exit codes of the file stages (sysexits).
const (
	exitCantCreate = 73
	exitIOErr      = 74
)

// resolvePath expands ~ and makes path absolute against the caller's
// directory.
func resolvePath(env *verbs.Env, path string) string {
	if path == "~" || strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, strings.TrimPrefix(path, "~"))
		}
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(env.Cwd, path)
	}
	return filepath.Clean(path)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// artifactWrite writes content= (else stdin) to path.
func artifactWrite(_ context.Context, env *verbs.Env, a *Args, io IO) error {
	const name = "artifact-write"
	raw := a.Get("path", "")
	if raw == "" {
		return verbs.Usagef("stage artifact-write needs path=<file>, e.g. path=./report.md")
	}
	mode, err := a.Enum(name, "mode", "create", "overwrite", "append")
	if err != nil {
		return err
	}
	echo, err := a.Enum(name, "echo", "result", "content")
	if err != nil {
		return err
	}
	path := resolvePath(env, raw)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return verbs.Invalidf("stage artifact-write: %s is a directory; path= names the file to write", path)
	}
	if mode == "create" {
		if _, err := os.Lstat(path); err == nil {
			return &verbs.Error{Exit: exitCantCreate, Code: "exists", Message: "stage artifact-write: artifact already exists: " + path,
				Hint: "mode=overwrite replaces it, mode=append adds to it, or choose another path"}
		}
	}
	content, err := inputOr(name, a, "content", io.In)
	if err != nil {
		return err
	}
	if err := writeArtifact(path, mode, content); err != nil {
		return &verbs.Error{Exit: exitCantCreate, Code: "cant_create", Message: "stage artifact-write: " + err.Error()}
	}
	if echo == "content" {
		_, err := io.Out.Write(content)
		return err
	}
	st, err := os.Stat(path)
	if err != nil {
		return &verbs.Error{Exit: exitIOErr, Code: "io", Message: "stage artifact-write: " + err.Error()}
	}
	return printJSON(io.Out, map[string]any{"path": path, "mode": mode, "bytes": st.Size(), "written": len(content)})
}

// writeArtifact writes content by mode: create and overwrite atomically
// (create refuses a file that appeared meanwhile), append in one write.
func writeArtifact(path, mode string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	switch mode {
	case "append":
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(content); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	case "create":
		// Claim the name first so a concurrent create loses cleanly, then
		// replace the empty claim atomically.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("artifact already exists: %s", path)
			}
			return err
		}
		f.Close()
		if err := fsutil.WriteFile(path, content, 0o644); err != nil {
			os.Remove(path) // the empty claim: no half-made artifact stays
			return err
		}
		return nil
	}
	return fsutil.WriteFile(path, content, 0o644)
}

// artifactManifest describes a file as JSON.
func artifactManifest(_ context.Context, env *verbs.Env, a *Args, io IO) error {
	raw := a.Get("path", "")
	if raw == "" {
		return verbs.Usagef("stage artifact-manifest needs path=<file>")
	}
	path := resolvePath(env, raw)
	m := map[string]any{"title": a.Get("title", "Artifact"), "status": a.Get("status", "draft"), "path": path,
		"exists": false, "bytes": 0, "modified": nil, "sha256": nil, "summary": a.Get("summary", "")}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return verbs.Invalidf("stage artifact-manifest: %s is a directory; path= names a file", path)
	case err == nil:
		sum, err := fileSHA256(path)
		if err != nil {
			return &verbs.Error{Exit: exitIOErr, Code: "io", Message: "stage artifact-manifest: " + err.Error()}
		}
		m["exists"], m["bytes"], m["modified"], m["sha256"] = true, st.Size(), st.ModTime().UTC().Format(time.RFC3339Nano), sum
	case !errors.Is(err, fs.ErrNotExist):
		return &verbs.Error{Exit: exitIOErr, Code: "io", Message: "stage artifact-manifest: " + err.Error()}
	}
	return printJSON(io.Out, m)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// changelogSection prints the `## ` section whose heading names version.
func changelogSection(_ context.Context, env *verbs.Env, a *Args, io IO) error {
	path := resolvePath(env, a.Get("file", "CHANGELOG.md"))
	version := a.Get("version", "Unreleased")
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &verbs.Error{Exit: verbs.ExitNoInput, Code: "not_found", Message: "stage changelog-section: no changelog at " + path, Hint: "file= names the changelog"}
		}
		return &verbs.Error{Exit: exitIOErr, Code: "io", Message: "stage changelog-section: " + err.Error()}
	}
	section, headings := findSection(data, version)
	if section == "" {
		return &verbs.Error{Exit: verbs.ExitDataErr, Code: "not_found",
			Message: fmt.Sprintf("stage changelog-section: no \"## \" heading in %s names %q (headings: %s)", path, version, strings.Join(headings, "; ")),
			Hint:    "version= is matched as text inside a \"## \" heading"}
	}
	_, err = fmt.Fprintln(io.Out, section)
	return err
}

// findSection returns the section from the first `## ` heading containing
// version to the next `## ` heading (trailing blank lines dropped), and
// the headings seen (at most 10), for the error.
func findSection(data []byte, version string) (string, []string) {
	var out []string
	var headings []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "## ") {
			if in {
				break
			}
			if len(headings) < 10 {
				headings = append(headings, strings.TrimPrefix(line, "## "))
			}
			in = strings.Contains(line, version)
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n \t"), headings
}
