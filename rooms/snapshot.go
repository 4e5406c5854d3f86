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
}

// SnapshotRoom is one room of a snapshot (a run has one, main).
type SnapshotRoom struct {
	Address string   `json:"address"`
	Members []Member `json:"members,omitempty"`
	Name    string   `json:"name"`
}

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
// branch:<run>/<b>) from a roster.
func NewSnapshot(run, self string, r Roster, now time.Time) Snapshot {
	s := Snapshot{Contacts: r.Contacts(self), Root: "run:" + run, Self: self,
		Rooms: []SnapshotRoom{{Address: "room:" + run, Members: slices.Clone(r), Name: Name}}, UpdatedAt: formatTime(now)}
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
	s := NewSnapshot(rt.run, self, rt.roster, now)
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
			if known.sig != snapshotSig(NewSnapshot(run, self, st.roster, now)) {
				return false
			}
			known.roster = st.rosterID
			st.snaps[path] = known
		}
	}
	return true
}
