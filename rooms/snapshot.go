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
	"slices"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
)

// Snapshot is communication.json: what an actor (a run or one of its
// branches) can see of its room — the file recipes get as
// {communication_file}.
type Snapshot struct {
	Contacts  []Contact      `json:"contacts,omitempty"` // the roster minus self
	Parent    string         `json:"parent,omitempty"`   // run:<run>, for a branch
	Root      string         `json:"root"`               // run:<run>
	Self      string         `json:"self"`
	Rooms     []SnapshotRoom `json:"rooms"`
	UpdatedAt string         `json:"updated_at"`
	// ContactsTotal is the contacts there are when Contacts holds only
	// the newest SnapshotMembers of them.
	ContactsTotal int `json:"contacts_total,omitempty"`
}

// SnapshotRoom is one room of a snapshot (a run has one, main).
type SnapshotRoom struct {
	Address string   `json:"address"`
	Members []Member `json:"members,omitempty"`
	Name    string   `json:"name"`
	// MembersTotal and Note, when Members holds only the newest
	// SnapshotMembers: how many there are and where the whole roster is.
	MembersTotal int    `json:"members_total,omitempty"`
	Note         string `json:"note,omitempty"`
}

// SnapshotMembers bounds the members (and the contacts) a communication
// snapshot carries: the newest to join; the whole roster is roster.json.
const SnapshotMembers = 100

// Contact is a roster member as another actor sees it.
type Contact struct {
	Address string   `json:"address"`
	Caps    []string `json:"caps,omitempty"`
	Claim   string   `json:"claim,omitempty"`
	Parent  string   `json:"parent,omitempty"`
	Role    string   `json:"role,omitempty"`
	Status  string   `json:"status,omitempty"`
}

// Contacts returns the roster members other than self (all of them when
// self is "").
func (r Roster) Contacts(self string) []Contact {
	var out []Contact
	for _, m := range r {
		if m.Address != self {
			out = append(out, Contact{Address: m.Address, Caps: m.Caps, Claim: m.Claim, Parent: m.Parent, Role: m.Role, Status: m.Status})
		}
	}
	return out
}

// NewSnapshot builds the snapshot of self (run:<run> or
// branch:<run>/<b>) from the roster of the room in dir: at most
// SnapshotMembers members and contacts (the newest to join), each within
// the roster limits, and a note naming the whole roster when there are
// more.
func NewSnapshot(dir, run, self string, r Roster, now time.Time) Snapshot {
	rosterPath := filepath.Join(RoomDir(dir), RosterFile)
	room := SnapshotRoom{Address: "room:" + run, Name: Name}
	members := r
	if len(r) > SnapshotMembers {
		members = r[len(r)-SnapshotMembers:]
		room.MembersTotal = len(r)
		room.Note = fmt.Sprintf("members: the newest %d of %d; the whole roster is %s (pi-actors inspect target=room:%s view=roster lines=%d)",
			SnapshotMembers, len(r), rosterPath, run, len(r))
	}
	room.Members = make([]Member, len(members))
	for i, m := range members {
		room.Members[i] = m.bounded(rosterPath)
	}
	contacts := Roster(room.Members).Contacts(self)
	s := Snapshot{Contacts: contacts, Root: "run:" + run, Self: self, Rooms: []SnapshotRoom{room}, UpdatedAt: formatTime(now)}
	if len(r) > SnapshotMembers {
		s.ContactsTotal = len(r)
		if r.Find(self) >= 0 {
			s.ContactsTotal--
		}
	}
	if a, err := mailbox.Parse(self); err == nil && a.Kind == mailbox.KindBranch {
		s.Parent = "run:" + run
	}
	return s
}

// SnapshotPath is where self's snapshot lives: <dir>/communication.json
// for the run, <dir>/branches/<b>/communication.json for a branch.
func SnapshotPath(dir, self string) (string, error) {
	a, err := mailbox.Parse(self)
	if err != nil {
		return "", err
	}
	switch a.Kind {
	case mailbox.KindRun:
		return filepath.Join(dir, CommunicationFile), nil
	case mailbox.KindBranch:
		return filepath.Join(BranchDir(dir, a.Branch), CommunicationFile), nil
	}
	return "", &mailbox.EnvelopeError{Field: "self", Msg: fmt.Sprintf("communication snapshots belong to run:<run> or branch:<run>/<branch>, not %s", self)}
}

// LoadSnapshot reads a snapshot file: nil for a missing or empty one (a
// snapshot is written without fsync, so a crash of the machine can leave
// a new one empty), an error wrapping ErrCorrupt for one that does not
// decode.
func LoadSnapshot(path string) (*Snapshot, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read communication snapshot: %w", err)
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read %s: %w: %v", path, ErrCorrupt, err)
	}
	return &s, nil
}

// writeSnapshot writes self's snapshot from the working roster, unless
// the file already says the same (last_seen and updated_at aside) and is
// younger than Limits.SnapshotMin. What this process last wrote or read
// is remembered (by file identity and a content signature), so the usual
// check costs one stat.
func (rt *roomTx) writeSnapshot(self string) error {
	path, err := SnapshotPath(rt.dir, self)
	if err != nil {
		return err
	}
	now := time.Now()
	s := NewSnapshot(rt.dir, rt.run, self, rt.roster, now)
	sig := snapshotSig(s)
	if id, ok := statID(path); ok && now.Sub(id.mtime) < rt.lim.SnapshotMin {
		if known, ok := rt.st.snaps[path]; ok && known.id == id {
			if known.sig == sig {
				return nil
			}
		} else if old, err := LoadSnapshot(path); err == nil && old != nil && snapshotSig(*old) == sig {
			rt.st.rememberSnapshot(path, id, sig)
			return nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write communication snapshot: %w", err)
	}
	// A snapshot: rebuilt from the roster whenever it changes, so it is
	// replaced atomically but not fsynced.
	data, err := fsutil.MarshalIndent(s)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := fsutil.WriteSnapshot(path, data, 0o600); err != nil {
		return err
	}
	if id, ok := statID(path); ok {
		rt.st.rememberSnapshot(path, id, sig)
	}
	return nil
}

// snapshotSig is a hash of a snapshot's content but for updated_at and
// the members' last_seen.
func snapshotSig(s Snapshot) uint64 {
	s.UpdatedAt = ""
	s.Rooms = slices.Clone(s.Rooms)
	for i := range s.Rooms {
		s.Rooms[i].Members = slices.Clone(s.Rooms[i].Members)
		for j := range s.Rooms[i].Members {
			s.Rooms[i].Members[j].LastSeen = ""
		}
	}
	b, _ := json.Marshal(s)
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// roomCurrent reports, without taking the room lock, whether a room
// operation that joins members (when absent) and writes selves' snapshots
// (when due) would change nothing: roster.json is the one this process
// last saw and has every member, and every snapshot is the one this
// process last wrote or read, fresh and with the same content. Members
// never leave a roster, so a true answer cannot be made wrong by a
// concurrent writer.
func roomCurrent(dir, run string, members, selves []string) bool {
	st := stateFor(dir)
	st.mu.Lock()
	defer st.mu.Unlock()
	id, ok := statID(filepath.Join(RoomDir(dir), RosterFile))
	if !ok || id != st.rosterID {
		return false
	}
	for _, m := range members {
		if st.roster.Find(m) < 0 {
			return false
		}
	}
	now, min := time.Now(), EnvLimits().SnapshotMin
	for _, self := range selves {
		path, err := SnapshotPath(dir, self)
		if err != nil {
			return false
		}
		known, ok := st.snaps[path]
		id, exists := statID(path)
		if !ok || !exists || known.id != id || now.Sub(id.mtime) >= min {
			return false
		}
		if known.roster != st.rosterID {
			if known.sig != snapshotSig(NewSnapshot(dir, run, self, st.roster, now)) {
				return false
			}
			known.roster = st.rosterID
			st.snaps[path] = known
		}
	}
	return true
}

// bounded is a snapshot read from a file as NewSnapshot would have
// written it: one written before the limits may carry every member, each
// whole; the whole roster is roster.json beside it.
func (s Snapshot) bounded(rosterPath string) Snapshot {
	if n := len(s.Contacts); n > SnapshotMembers {
		s.Contacts, s.ContactsTotal = s.Contacts[n-SnapshotMembers:], n
	}
	for i, c := range s.Contacts {
		m := Member{Caps: c.Caps, Claim: c.Claim, Parent: c.Parent, Role: c.Role, Status: c.Status}.bounded(rosterPath)
		s.Contacts[i] = Contact{Address: c.Address, Caps: m.Caps, Claim: m.Claim, Parent: m.Parent, Role: m.Role, Status: m.Status}
	}
	s.Rooms = slices.Clone(s.Rooms)
	for i := range s.Rooms {
		room := &s.Rooms[i]
		if n := len(room.Members); n > SnapshotMembers {
			room.Members, room.MembersTotal = room.Members[n-SnapshotMembers:], n
			room.Note = fmt.Sprintf("members: the newest %d of %d; the whole roster is %s", SnapshotMembers, n, rosterPath)
		}
		members := make([]Member, len(room.Members))
		for j, m := range room.Members {
			members[j] = m.bounded(rosterPath)
		}
		room.Members = members
	}
	return s
}
