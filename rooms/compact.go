package rooms

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
)

// Compaction is compaction.json: the last timeline compaction.
type Compaction struct {
	CompactedAt  string `json:"compacted_at"`
	DroppedCount int    `json:"dropped_count"`
	// LastDroppedAt is the received_at of the newest entry dropped: a
	// reader that saw it (since >= it) missed nothing.
	LastDroppedAt string `json:"last_dropped_at,omitempty"`
	FirstKeptAt   string `json:"first_kept_at,omitempty"`
	LastKeptAt    string `json:"last_kept_at,omitempty"`
	MaxMessages   int    `json:"max_messages"`
}

// compactSlack is how far past MaxMessages the timeline may grow before a
// compaction: max/16 (none below 16), so a full room pays one rewrite per
// max/16 appends instead of one per append.
func compactSlack(max int) int { return max / 16 }

// compactIfDue compacts the timeline when its line count exceeds
// MaxMessages plus the slack.
func (rt *roomTx) compactIfDue() error {
	limit := rt.lim.MaxMessages
	if rt.st.f.Lines()-rt.st.malformed <= limit+compactSlack(limit) {
		return nil
	}
	c, malformed, err := compactLocked(rt.tx, limit, filepath.Join(RoomDir(rt.dir), CompactionFile))
	rt.st.malformed = malformed // they stay: the next trigger discounts them
	if err != nil || c == nil {
		return err
	}
	return rt.sync()
}

// compactLocked keeps the newest limit timeline entries and every
// malformed line (never dropped, wherever it is; they do not count
// against limit, so torn lines can never crowd out the entry just
// appended). It returns nil when there was nothing to drop, and the
// number of malformed lines. The record of what it dropped goes to
// record (compaction.json) before the timeline is rewritten: a reader
// never finds entries gone without it (at worst, after a crash, it
// reports a gap that is not there).
func compactLocked(tx *mailbox.Tx, limit int, record string) (*Compaction, int, error) {
	c := &Compaction{MaxMessages: limit}
	malformed := 0
	err := tx.Rewrite(func(lines []mailbox.Line) ([]mailbox.Line, error) {
		budget := limit
		for _, l := range lines {
			if l.Err != nil {
				malformed++
			}
		}
		keep := make([]bool, len(lines))
		for i := len(lines) - 1; i >= 0; i-- {
			if lines[i].Err != nil || budget > 0 {
				keep[i] = true
				if lines[i].Err == nil {
					budget--
				}
			}
		}
		kept := make([]mailbox.Line, 0, len(lines))
		for i, l := range lines {
			if !keep[i] {
				c.DroppedCount++
				if ts := str(l.Value, "received_at"); ts != "" {
					c.LastDroppedAt = ts
				}
				continue
			}
			kept = append(kept, l)
			if l.Err == nil {
				if ts := str(l.Value, "received_at"); ts != "" {
					if c.FirstKeptAt == "" {
						c.FirstKeptAt = ts
					}
					c.LastKeptAt = ts
				}
			}
		}
		if c.DroppedCount > 0 {
			c.CompactedAt = formatTime(time.Now())
			if err := fsutil.WriteJSON(record, c, 0o600); err != nil {
				return nil, err
			}
		}
		return kept, nil
	})
	if err != nil {
		return nil, malformed, fmt.Errorf("compact room timeline: %w", err)
	}
	if c.DroppedCount == 0 {
		return nil, malformed, nil
	}
	return c, malformed, nil
}

// LoadCompaction reads a room's compaction.json: nil when the room was
// never compacted, an error wrapping ErrCorrupt when it does not decode.
func LoadCompaction(dir string) (*Compaction, error) {
	path := filepath.Join(RoomDir(dir), CompactionFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read compaction: %w", err)
	}
	var c Compaction
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("read %s: %w: %v", path, ErrCorrupt, err)
	}
	return &c, nil
}
