package rooms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// roomState is what this process remembers of a room between
// operations, so an append reads only what others added since: the
// timeline's line count and newest received_at (through a lazy follower)
// and the roster as last read. It is checked against the files on every
// operation, under the room lock.
type roomState struct {
	mu       sync.Mutex
	f        *mailbox.Follower
	last     time.Time
	roster   Roster
	rosterID fileID
	snaps    map[string]snapState // communication snapshots, by path
	// ids holds a hash of every entry id in the timeline once a
	// caller-chosen id had to be checked (nil before): a duplicate check
	// then costs a lookup, not a read of the file.
	ids map[uint64]struct{}
	// malformed is how many malformed lines the last compaction kept
	// (they are never dropped, so they do not count towards its trigger).
	malformed int
}

// snapState is a snapshot file as this process last wrote or read it.
type snapState struct {
	id  fileID
	sig uint64
	// roster is the roster.json the sig was last checked against: while
	// it is the current one, the snapshot's content is known to match
	// without computing the sig again.
	roster fileID
}

// maxSnapStates bounds the snapshots a room state remembers.
const maxSnapStates = 64

func (st *roomState) rememberSnapshot(path string, id fileID, sig uint64) {
	if st.snaps == nil || len(st.snaps) >= maxSnapStates {
		st.snaps = map[string]snapState{}
	}
	st.snaps[path] = snapState{id: id, sig: sig, roster: st.rosterID}
}

// fileID tells whether a small state file changed since it was read.
type fileID struct {
	ino   uint64
	size  int64
	mtime time.Time
}

func statID(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino = st.Ino
	}
	return id, true
}

// maxCachedRooms bounds the rooms whose state a process keeps.
const maxCachedRooms = 256

var roomStates = struct {
	sync.Mutex
	m map[string]*roomState
}{m: map[string]*roomState{}}

func stateFor(dir string) *roomState {
	roomStates.Lock()
	defer roomStates.Unlock()
	key := filepath.Clean(dir)
	st := roomStates.m[key]
	if st == nil {
		if len(roomStates.m) >= maxCachedRooms {
			for k := range roomStates.m { // evict one at random
				delete(roomStates.m, k)
				break
			}
		}
		st = &roomState{f: &mailbox.Follower{Path: TimelinePath(dir), Lazy: true}}
		roomStates.m[key] = st
	}
	return st
}

// reset forgets all this process knows of the room (after a rollback of
// the timeline): the next operation reads it, and its roster, afresh.
// The caller holds st.mu.
func (st *roomState) reset() {
	st.f = &mailbox.Follower{Path: st.f.Path, Lazy: true}
	st.last, st.roster, st.rosterID, st.snaps, st.ids, st.malformed = time.Time{}, nil, fileID{}, nil, nil, 0
}

// roomTx is one operation on a room under its lock.
type roomTx struct {
	dir, run string
	st       *roomState
	tx       *mailbox.Tx
	lim      Limits
	roster   Roster // the working roster
	corrupt  bool   // roster.json did not decode
	changed  bool   // a member was added or changed beyond last_seen
	seen     bool   // a member's last_seen moved
	snaps    []string
	appended []Entry // to ring the doorbell for, once the lock is released
	quiet    bool    // ring no doorbell (the run's own join at spawn)
}

// withRoom runs fn under the room lock with the timeline state and the
// roster up to date, then writes what fn changed: the roster (see
// Limits.RosterMin), the snapshots fn asked for, and a compaction. Once
// the lock is released it writes a room.message wake for each new entry.
func withRoom(dir, run string, fn func(rt *roomTx) error) (c Counts, err error) {
	st := stateFor(dir)
	st.mu.Lock()
	defer st.mu.Unlock()
	rt := &roomTx{dir: dir, run: run, st: st, lim: EnvLimits()}
	err = mailbox.Update(TimelinePath(dir), func(tx *mailbox.Tx) error {
		rt.tx = tx
		if err := rt.sync(); err != nil {
			return err
		}
		if err := rt.loadRoster(); err != nil {
			return err
		}
		before, _ := statID(TimelinePath(dir)) // size 0 when missing
		err := fn(rt)
		if err == nil {
			err = rt.flush()
		}
		if err != nil && len(rt.appended) > 0 {
			// The entries are on the timeline, the roster or a snapshot
			// they change is not (a full disk): take them back off, so a
			// failed post stored nothing and its retry is no duplicate.
			rt.rollback(before.size)
		}
		if err != nil {
			return err
		}
		c = rt.counts()
		return nil
	})
	if err != nil {
		return c, err
	}
	for _, e := range rt.appended {
		if rt.quiet {
			break
		}
		// Advisory (watchers watch the timeline too): a doorbell that
		// cannot be written does not fail a post already stored.
		wakeRoom(dir, run, e)
	}
	return c, nil
}

// rollback truncates the timeline back to size (its length before this
// operation's appends), under the lock, and forgets what this process
// read of it: its reader starts again from the shorter file.
func (rt *roomTx) rollback(size int64) {
	if err := os.Truncate(TimelinePath(rt.dir), size); err != nil {
		return
	}
	rt.appended = nil
	rt.st.reset()
}

// sync reads the timeline lines added since the last operation.
func (rt *roomTx) sync() error {
	lines, reset, err := rt.st.f.Next()
	if err != nil {
		return err
	}
	if reset {
		rt.st.last = time.Time{}
		rt.st.ids = nil
	}
	if rt.st.ids != nil {
		for _, l := range lines {
			rt.st.ids[idHash(lineID(l))] = struct{}{}
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		lines[i].Decode()
		if lines[i].Err != nil {
			continue
		}
		if t := parseTime(str(lines[i].Value, "received_at")); !t.IsZero() {
			if t.After(rt.st.last) {
				rt.st.last = t
			}
			break
		}
	}
	return nil
}

// loadRoster takes the cached roster, or reads roster.json if it changed.
func (rt *roomTx) loadRoster() error {
	path := filepath.Join(RoomDir(rt.dir), RosterFile)
	id, ok := statID(path)
	if !ok {
		rt.st.roster, rt.st.rosterID = nil, fileID{}
		rt.roster = nil
		return nil
	}
	if id != rt.st.rosterID {
		data, err := os.ReadFile(path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("read roster: %w", err)
		}
		r, err := decodeRoster(data)
		if err != nil {
			rt.corrupt = true
			r = nil
		}
		rt.st.roster, rt.st.rosterID = r, id
	}
	rt.roster = rt.st.roster
	return nil
}

// append stores env as a timeline entry (id: the caller's or a new uuid;
// received_at: now, but always after the newest entry) and applies it to
// the roster. An entry with the caller's id already in the timeline is
// returned with dup true, and nothing is written.
func (rt *roomTx) append(env mailbox.Envelope) (e Entry, dup bool, err error) {
	if env.ID != "" {
		if err := rt.indexIDs(); err != nil {
			return Entry{}, false, err
		}
		if _, maybe := rt.st.ids[idHash(env.ID)]; maybe {
			rec, err := rt.tx.Find(env.ID)
			if err != nil {
				return Entry{}, false, err
			}
			if rec != nil {
				return entryFrom(rec), true, nil
			}
		}
	} else {
		env.ID = mailbox.NewID()
	}
	ts := time.Now()
	if !ts.After(rt.st.last) {
		ts = rt.st.last.Add(time.Nanosecond)
	}
	e = Entry{Envelope: env, ReceivedAt: formatTime(ts)}
	if err := rt.tx.Append(e); err != nil {
		return Entry{}, false, err
	}
	if err := rt.sync(); err != nil {
		return Entry{}, false, err
	}
	r, changed := rt.roster.apply(e)
	rt.roster = r
	rt.changed = rt.changed || changed
	rt.seen = rt.seen || e.From != ""
	rt.appended = append(rt.appended, e)
	return e, false, nil
}

// indexIDs builds the id index from the whole timeline (once per file
// this process sees; later lines are added by sync).
func (rt *roomTx) indexIDs() error {
	if rt.st.ids != nil {
		return nil
	}
	lines, err := mailbox.Read(rt.tx.Path())
	if err != nil {
		return err
	}
	rt.st.ids = make(map[uint64]struct{}, len(lines))
	for _, l := range lines {
		if !l.Partial {
			rt.st.ids[idHash(str(l.Value, "id"))] = struct{}{}
		}
	}
	return nil
}

// lineID is the id of an undecoded timeline line: found at its end (an
// entry this package wrote ends with "id":"<id>","received_at":"…"}), or
// by decoding the line.
func lineID(l mailbox.Line) string {
	raw := l.Raw
	if i := bytes.LastIndex(raw, []byte(`,"received_at":"`)); i > 0 && raw[i-1] == '"' {
		if j := bytes.LastIndex(raw[:i-1], []byte(`"id":"`)); j > 0 && (raw[j-1] == ',' || raw[j-1] == '{') {
			if id := raw[j+len(`"id":"`) : i-1]; bytes.IndexAny(id, `"\`) < 0 {
				return string(id)
			}
		}
	}
	l.Decode()
	return str(l.Value, "id")
}

func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64()
}

// snapshot asks for self's communication snapshot to be written (if due)
// when the operation ends.
func (rt *roomTx) snapshot(self string) { rt.snaps = append(rt.snaps, self) }

// counts are the room's message and roster counts as of now.
func (rt *roomTx) counts() Counts {
	return Counts{MessageCount: rt.st.f.Lines(), RosterCount: len(rt.roster)}
}

// flush writes the roster if due, compacts the timeline if due, and
// writes the snapshots asked for.
func (rt *roomTx) flush() error {
	path := filepath.Join(RoomDir(rt.dir), RosterFile)
	write := rt.changed || rt.corrupt
	if !write && rt.seen {
		id, ok := statID(path)
		write = !ok || time.Since(id.mtime) >= rt.lim.RosterMin
	}
	if write {
		if err := writeRoster(path, rt.roster, rt.corrupt); err != nil {
			return err
		}
		id, _ := statID(path)
		rt.st.roster, rt.st.rosterID = rt.roster, id
	}
	if err := rt.compactIfDue(); err != nil {
		return err
	}
	for _, self := range rt.snaps {
		if err := rt.writeSnapshot(self); err != nil {
			return err
		}
	}
	return nil
}

// Counts are a room's sizes: message_count is the timeline's line count,
// roster_count its members (left ones included).
type Counts struct {
	MessageCount int `json:"message_count"`
	RosterCount  int `json:"roster_count"`
}

// AppendResult is the result of a timeline append (the room route's
// {room, message_count, roster_count, sent}).
type AppendResult struct {
	Entry     Entry  `json:"-"`
	Duplicate bool   `json:"duplicate,omitempty"`
	Room      string `json:"room"`
	Counts
	Sent bool `json:"sent"`
}

// Append appends env to the room timeline of the run whose state
// directory is dir, without the room route's rules (Post applies them):
// env.To must be the run's room. It updates the roster from env.From and
// writes the run's communication snapshot (and a branch sender's) when
// due. A caller-chosen id already in the timeline is a duplicate: the
// stored entry comes back and nothing is written.
func Append(dir string, env mailbox.Envelope) (AppendResult, error) {
	env, run, err := roomEnvelope(env)
	if err != nil {
		return AppendResult{}, err
	}
	var res AppendResult
	res.Counts, err = withRoom(dir, run, func(rt *roomTx) error {
		e, dup, err := rt.append(env)
		if err != nil {
			return err
		}
		res.Entry, res.Duplicate, res.Room, res.Sent = e, dup, Name, true
		if dup {
			return nil // a retry writes nothing
		}
		rt.snapshot("run:" + run)
		if from, err := mailbox.Parse(e.From); err == nil && from.Kind == mailbox.KindBranch && from.ID == run {
			rt.snapshot(e.From)
		}
		return nil
	})
	if err != nil {
		return AppendResult{}, fmt.Errorf("append to room:%s: %w", run, err)
	}
	return res, nil
}

// roomEnvelope normalizes env and checks that it is addressed to a room.
func roomEnvelope(env mailbox.Envelope) (mailbox.Envelope, string, error) {
	env, err := env.Normalized()
	if err != nil {
		return env, "", err
	}
	to, err := mailbox.Parse(env.To)
	if err != nil {
		return env, "", err
	}
	if to.Kind != mailbox.KindRoom {
		return env, "", &mailbox.EnvelopeError{Field: "to", Msg: fmt.Sprintf("room append needs to=room:<run>, got %s", env.To)}
	}
	return env, to.ID, nil
}

// wakeRoom rings the run's doorbell for a new room entry.
func wakeRoom(dir, run string, e Entry) error {
	meta := map[string]any{"type": e.Type, "id": e.ID}
	if e.From != "" {
		meta["from"] = e.From
	}
	_, err := mailbox.AppendWake(filepath.Join(dir, WakeFile), mailbox.Wake{Actor: "room:" + run, Reason: mailbox.WakeRoomMessage, StateDir: dir, Metadata: meta})
	return err
}

// TimeFormat is the format of received_at: RFC 3339 in UTC with a fixed
// nine-digit fraction, so timeline times also sort as strings.
const TimeFormat = "2006-01-02T15:04:05.000000000Z07:00"

// Entry is one room timeline entry: the room-visible envelope (its ID is
// the entry id) and the time the room received it. It is stored as the
// envelope's JSON with received_at last.
type Entry struct {
	mailbox.Envelope
	ReceivedAt string
}

// MarshalJSON writes the envelope in its key order, then received_at.
func (e Entry) MarshalJSON() ([]byte, error) {
	b, err := e.Envelope.MarshalJSON()
	if err != nil || e.ReceivedAt == "" {
		return b, err
	}
	ts, err := json.Marshal(e.ReceivedAt)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(ts)+16)
	out = append(out, b[:len(b)-1]...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"received_at":`...)
	out = append(append(out, ts...), '}')
	return out, nil
}

// UnmarshalJSON decodes a stored entry leniently: a line that is an
// object but not a valid envelope (an older writer's) keeps whatever
// fields it has.
func (e *Entry) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("decode room entry: %w", err)
	}
	*e = entryFrom(m)
	return nil
}

// Time is ReceivedAt parsed (zero when missing or unparsable).
func (e Entry) Time() time.Time { return parseTime(e.ReceivedAt) }

// entryFrom reads a decoded timeline line.
func entryFrom(m map[string]any) Entry {
	env, err := mailbox.Normalize(m)
	if err != nil {
		env = mailbox.Envelope{To: str(m, "to"), Type: str(m, "type"), From: str(m, "from"), Summary: str(m, "summary"),
			CorrelationID: str(m, "correlation_id"), ReplyTo: str(m, "reply_to"), Body: m["body"], ID: str(m, "id")}
		env.Metadata, _ = m["metadata"].(map[string]any)
	}
	return Entry{Envelope: env, ReceivedAt: str(m, "received_at")}
}

// str is a string field of a decoded object ("" if absent or not a
// string).
func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func formatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }
