package rooms

import (
	"fmt"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// SinceResult is what Since found.
type SinceResult struct {
	// Entries are the timeline entries received after the given time,
	// oldest first.
	Entries []Entry `json:"entries"`
	// Missed is true when a compaction may have dropped entries received
	// after the given time (it dropped entries and the given time is
	// before the first one it kept).
	Missed bool `json:"missed,omitempty"`
	// More is true when there were more than max entries: ask again
	// with the last entry's ReceivedAt.
	More bool `json:"more,omitempty"`
}

// Since returns up to max (default 1000) timeline entries received after
// receivedAt (an RFC 3339 time; "" for the oldest), for a watcher that
// reconnects: entries' received_at are strictly increasing, so asking
// again from the last one seen misses nothing and repeats nothing. It
// reads the timeline backwards from the end, so a recent time costs only
// the entries after it.
func Since(dir, receivedAt string, max int) (SinceResult, error) {
	if max <= 0 {
		max = 1000
	}
	var since time.Time
	if receivedAt != "" {
		if since = parseTime(receivedAt); since.IsZero() {
			return SinceResult{}, &mailbox.EnvelopeError{Field: "since", Msg: fmt.Sprintf("since must be an RFC 3339 time such as a received_at, got %q", receivedAt)}
		}
	}
	path := TimelinePath(dir)
	var lines []mailbox.Line
	for n := 64; ; n *= 4 {
		var err error
		if lines, err = mailbox.Tail(path, n); err != nil {
			return SinceResult{}, err
		}
		if len(lines) < n || (!since.IsZero() && !firstTime(lines).After(since)) {
			break
		}
	}
	var r SinceResult
	for _, l := range lines {
		if l.Err != nil || l.Partial {
			continue
		}
		e := entryFrom(l.Value)
		if t := e.Time(); t.IsZero() || !t.After(since) {
			continue
		}
		if len(r.Entries) == max {
			r.More = true
			break
		}
		r.Entries = append(r.Entries, e)
	}
	if !since.IsZero() {
		c, err := LoadCompaction(dir)
		if err == nil && c != nil && c.DroppedCount > 0 {
			// Missed: an entry newer than since was dropped (older
			// compactions did not record the newest dropped entry: then
			// anything before the first kept one counts).
			if last := parseTime(c.LastDroppedAt); !last.IsZero() {
				r.Missed = since.Before(last)
			} else if first := parseTime(c.FirstKeptAt); !first.IsZero() && since.Before(first) {
				r.Missed = true
			}
		}
	}
	return r, nil
}

// Newest is the received_at of the newest entry in the timeline (zero
// when it has none): where a watcher without since starts, should it have
// to catch up from the files before it received anything.
func Newest(dir string) (time.Time, error) {
	lines, err := mailbox.Tail(TimelinePath(dir), 64)
	if err != nil {
		return time.Time{}, err
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Err != nil || lines[i].Partial {
			continue
		}
		if t := parseTime(str(lines[i].Value, "received_at")); !t.IsZero() {
			return t, nil
		}
	}
	return time.Time{}, nil
}

// firstTime is the received_at of the first well-formed line with one.
func firstTime(lines []mailbox.Line) time.Time {
	for _, l := range lines {
		if l.Err == nil {
			if t := parseTime(str(l.Value, "received_at")); !t.IsZero() {
				return t
			}
		}
	}
	return time.Time{}
}

// Cursor follows a room timeline for a live watcher: each Next returns
// the entries appended since the previous call, in order, each once —
// also across a compaction (which replaces the file: the cursor re-reads
// it and skips what it already returned, by received_at).
type Cursor struct {
	f    *mailbox.Follower
	dir  string
	last time.Time
	gap  bool // a compaction dropped entries not returned yet
}

// NewCursor returns a cursor positioned after receivedAt ("" for the
// current end of the timeline: only new entries).
func NewCursor(dir, receivedAt string) (*Cursor, error) {
	c := &Cursor{f: mailbox.NewFollower(TimelinePath(dir)), dir: dir}
	if receivedAt != "" {
		if c.last = parseTime(receivedAt); c.last.IsZero() {
			return nil, &mailbox.EnvelopeError{Field: "since", Msg: fmt.Sprintf("since must be an RFC 3339 time such as a received_at, got %q", receivedAt)}
		}
		return c, nil
	}
	c.f.Lazy = true
	lines, _, err := c.f.Next()
	c.f.Lazy = false
	if err != nil {
		return nil, err
	}
	for i := len(lines) - 1; i >= 0; i-- {
		lines[i].Decode()
		if t := parseTime(str(lines[i].Value, "received_at")); !t.IsZero() {
			c.last = t
			break
		}
	}
	// No entry yet: every line after the position read is new (a clock
	// reading here could drop an entry stamped just before it and
	// written just after).
	return c, nil
}

// Next returns the entries added since the last call. When the timeline
// was compacted meanwhile and an entry newer than the last one returned
// was dropped before this cursor read it, Gap reports so afterwards: the
// entries returned are complete from the file, but not from the room.
func (c *Cursor) Next() ([]Entry, error) {
	lines, reset, err := c.f.Next()
	if err != nil {
		return nil, err
	}
	if reset && !c.last.IsZero() {
		if cp, err := LoadCompaction(c.dir); err == nil && cp != nil {
			if last := parseTime(cp.LastDroppedAt); !last.IsZero() {
				c.gap = c.gap || c.last.Before(last)
			} else if first := parseTime(cp.FirstKeptAt); !first.IsZero() && c.last.Before(first) {
				c.gap = true
			}
		}
	}
	var out []Entry
	for _, l := range lines {
		if l.Err != nil {
			continue
		}
		e := entryFrom(l.Value)
		t := e.Time()
		if t.IsZero() || !t.After(c.last) {
			continue
		}
		c.last = t
		out = append(out, e)
	}
	return out, nil
}

// Gap reports (once) whether a compaction dropped entries this cursor had
// not returned yet (see Next).
func (c *Cursor) Gap() bool {
	g := c.gap
	c.gap = false
	return g
}
