package recipes

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// LockName is the lock file, in the user root, that serialises every
// rewrite of a user recipe: register_tool writes and usage updates take it,
// so neither loses the other's change.
const LockName = ".recipes.lock"

// Usage launch kinds.
const (
	UsageTool   = "tool"
	UsageSpawn  = "spawn"
	UsageDirect = "direct"
)

// ResetReason is recorded when a recipe's content changed since its
// counters started.
const ResetReason = "recipe content fingerprint changed"

// RecordUsage records one launch of a user-root recipe in its usage
// metadata (kind is tool, spawn or direct).
//
// Only JSON files directly in <agent>/recipes or in <agent>/recipes/drafts
// are tracked. Packaged recipes (pkg: paths), Markdown recipes, files
// elsewhere, symbolic links (their target is not ours to rewrite) and files
// that are not a JSON object are left alone without error. The file is
// rewritten atomically under the user root's lock, keeping the author's key
// order and every other field.
func RecordUsage(path, kind string) error {
	if IsPackaged(path) || !strings.HasSuffix(path, ".json") {
		return nil
	}
	agent, err := config.AgentDir()
	if err != nil {
		return err
	}
	return recordUsage(UserRoot(agent), path, kind, time.Now())
}

func recordUsage(root, path, kind string, now time.Time) error {
	switch kind {
	case UsageTool, UsageSpawn, UsageDirect:
	default:
		return fmt.Errorf("record usage of %s: unknown launch kind %q (tool, spawn or direct)", path, kind)
	}
	if IsPackaged(path) || !strings.HasSuffix(path, ".json") {
		return nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("record usage of %s: %w", path, err)
	}
	if !tracked(root, abs) {
		return nil
	}
	unlock, err := fsutil.Lock(filepath.Join(root, LockName))
	if err != nil {
		return fmt.Errorf("record usage of %s: %w", abs, err)
	}
	defer unlock()
	st, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record usage of %s: %w", abs, err)
	}
	if !st.Mode().IsRegular() || sharedOrReadOnly(st) {
		return nil
	}
	data, err := readFile(abs)
	if err != nil {
		return fmt.Errorf("record usage of %s: %w", abs, err)
	}
	v, err := decodeOrdered(data)
	if err != nil {
		return nil // not JSON: nothing to record into
	}
	doc, ok := v.(*jsonObject)
	if !ok {
		return nil
	}
	updateUsage(doc, kind, now)
	out, err := marshalOrdered(doc)
	if err != nil {
		return fmt.Errorf("record usage of %s: %w", abs, err)
	}
	if len(out) > MaxFileBytes {
		// The counters would push the recipe past the size every load
		// refuses: a call must never make its recipe invalid.
		return nil
	}
	return fsutil.WriteFile(abs, out, st.Mode().Perm())
}

// tracked reports whether abs sits directly in the user root or in its
// drafts directory (compared both as written and with symbolic links
// evaluated).
func tracked(root, abs string) bool {
	dir := filepath.Dir(abs)
	rootAbs, err := filepath.Abs(root)
	if err != nil {
		return false
	}
	drafts := filepath.Join(rootAbs, "drafts")
	if dir == rootAbs || dir == drafts {
		return true
	}
	realDir, err1 := filepath.EvalSymlinks(dir)
	realRoot, err2 := filepath.EvalSymlinks(rootAbs)
	if err1 != nil || err2 != nil {
		return false
	}
	return realDir == realRoot || realDir == filepath.Join(realRoot, "drafts")
}

// updateUsage counts one launch in doc's usage object: calls and
// <kind>_calls grow by one, last_called and launch_kind are set, and the
// content fingerprint is stored. When the stored fingerprint differs from
// the current content, every counter restarts at 1 and reset_at /
// reset_reason say so.
func updateUsage(doc *jsonObject, kind string, now time.Time) {
	fp := Fingerprint(toPlain(doc).(map[string]any))
	usage, _ := mustGet(doc, "usage").(*jsonObject)
	if usage == nil {
		usage = newJSONObject()
	}
	stamp := now.UTC().Format("2006-01-02T15:04:05.000Z")
	old, _ := mustGet(usage, "fingerprint").(string)
	if old != "" && old != fp {
		for _, k := range append([]string{}, usage.keys...) {
			if k == "calls" || strings.HasSuffix(k, "_calls") {
				usage.del(k)
			}
		}
		usage.set("calls", json.Number("1"))
		usage.set(kind+"_calls", json.Number("1"))
		usage.set("reset_at", stamp)
		usage.set("reset_reason", ResetReason)
	} else {
		usage.set("calls", json.Number(fmt.Sprint(counter(usage, "calls")+1)))
		usage.set(kind+"_calls", json.Number(fmt.Sprint(counter(usage, kind+"_calls")+1)))
	}
	usage.set("last_called", stamp)
	usage.set("launch_kind", kind)
	usage.set("fingerprint", fp)
	doc.set("usage", usage)
}

func mustGet(o *jsonObject, key string) any {
	v, _ := o.get(key)
	return v
}

// counter reads a non-negative integer counter; anything else counts as 0.
func counter(o *jsonObject, key string) int64 {
	n, ok := mustGet(o, key).(json.Number)
	if !ok {
		return 0
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0
	}
	return i
}

// Fingerprint is the sha256 (hex) of a recipe's content without its usage
// metadata, as compact JSON with sorted keys: the identity usage counters
// belong to.
func Fingerprint(raw map[string]any) string {
	content := make(map[string]any, len(raw))
	for k, v := range raw {
		if k != "usage" {
			content[k] = v
		}
	}
	sum := sha256.Sum256(jsonBytes(content))
	return hex.EncodeToString(sum[:])
}
