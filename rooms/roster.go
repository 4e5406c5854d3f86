package rooms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
)

// Member is one room roster member. JoinedAt is the first time the room
// saw it, LastSeen the latest; the other fields come from message bodies
// (see Roster.apply).
type Member struct {
	Address  string   `json:"address"`
	Caps     []string `json:"caps,omitempty"`
	Claim    string   `json:"claim,omitempty"`
	Display  string   `json:"display,omitempty"`
	JoinedAt string   `json:"joined_at"`
	LastSeen string   `json:"last_seen"`
	Parent   string   `json:"parent,omitempty"`
	Role     string   `json:"role,omitempty"`
	Status   string   `json:"status,omitempty"`
	// Cut says, per field, what the roster limits cut of the value a
	// post set and where the whole is (its timeline entry).
	Cut map[string]string `json:"cut,omitempty"`
}

// sameBut reports whether m and o differ at most in LastSeen.
func (m Member) sameBut(o Member) bool {
	m.LastSeen = o.LastSeen
	return m.Address == o.Address && slices.Equal(m.Caps, o.Caps) && m.Claim == o.Claim && m.Display == o.Display &&
		m.JoinedAt == o.JoinedAt && m.Parent == o.Parent && m.Role == o.Role && m.Status == o.Status && maps.Equal(m.Cut, o.Cut)
}

// The roster's limits: what a post's body sets for its sender is cut to
// them when the roster stores it (the whole stays in the post's timeline
// entry, which Member.Cut names), so roster.json, the roster and
// contacts views and every communication snapshot stay small whatever a
// post carries.
const (
	MaxCaps         = 64   // caps entries kept
	MaxCapBytes     = 128  // bytes of one cap
	MaxClaimBytes   = 1024 // claim (an object's compact JSON)
	MaxDisplayBytes = 1024 // display
	MaxFieldBytes   = 128  // role, status, parent
)

// fieldLimit is the byte limit of each string field of a member.
var fieldLimit = map[string]int{"claim": MaxClaimBytes, "display": MaxDisplayBytes, "parent": MaxFieldBytes, "role": MaxFieldBytes, "status": MaxFieldBytes}

// cutString cuts s to at most limit bytes at a rune boundary, ending in
// "…"; it reports what was cut ("" when s fits).
func cutString(s *string, limit int) string {
	n := len(*s)
	if n <= limit {
		return ""
	}
	end := limit - len("…")
	for end > 0 && !utf8.RuneStart((*s)[end]) {
		end--
	}
	*s = (*s)[:end] + "…"
	return fmt.Sprintf("%d bytes, %d kept", n, limit)
}

// cutCaps bounds caps to MaxCaps entries of MaxCapBytes; it reports what
// was cut ("" when nothing).
func cutCaps(c *[]string) string {
	var notes []string
	if n := len(*c); n > MaxCaps {
		*c = slices.Clip((*c)[:MaxCaps])
		notes = append(notes, fmt.Sprintf("%d entries, %d kept", n, MaxCaps))
	}
	long := 0
	for i := range *c {
		if cutString(&(*c)[i], MaxCapBytes) != "" {
			long++
		}
	}
	if long > 0 {
		notes = append(notes, fmt.Sprintf("%d cut to %d bytes", long, MaxCapBytes))
	}
	return strings.Join(notes, ", ")
}

// noteCut records (or, for a value that fits, forgets) what the limits
// cut of field, whose whole is in where. m.Cut is copied first: m's
// maps are shared with the roster it came from.
func (m *Member) noteCut(field, what, where string) {
	if what == "" && m.Cut[field] == "" {
		return
	}
	m.Cut = maps.Clone(m.Cut)
	if what == "" {
		delete(m.Cut, field)
		if len(m.Cut) == 0 {
			m.Cut = nil
		}
		return
	}
	if m.Cut == nil {
		m.Cut = map[string]string{}
	}
	m.Cut[field] = what + "; whole in " + where
}

// bounded is m with every field within the roster limits: a member
// stored before them (the whole stays in where).
func (m Member) bounded(where string) Member {
	if len(m.Caps) > MaxCaps || slices.ContainsFunc(m.Caps, func(c string) bool { return len(c) > MaxCapBytes }) {
		m.Caps = slices.Clone(m.Caps)
		m.noteCut("caps", cutCaps(&m.Caps), where)
	}
	for key, dst := range map[string]*string{"claim": &m.Claim, "display": &m.Display, "parent": &m.Parent, "role": &m.Role, "status": &m.Status} {
		if what := cutString(dst, fieldLimit[key]); what != "" {
			m.noteCut(key, what, where)
		}
	}
	return m
}

// Roster is a room's members in the order they joined. Leaving keeps a
// member (status left).
type Roster []Member

// Find returns the index of address, or -1.
func (r Roster) Find(address string) int {
	return slices.IndexFunc(r, func(m Member) bool { return m.Address == address })
}

// TypeLeave is the message type that marks its sender as left.
const TypeLeave = "actor.leave"

// apply updates the sender of a timeline entry and returns the new roster
// (r is not modified) and whether anything but a last_seen changed. An
// entry without from changes nothing.
//
// Any entry updates its sender: an object body's caps, claim, display,
// parent and role replace the member's when present; role defaults to
// actor; status is body.status, else the current status, else present.
// actor.leave only sets status (body.status, else left): the member
// stays.
func (r Roster) apply(e Entry) (out Roster, changed bool) {
	if e.From == "" {
		return r, false
	}
	i := r.Find(e.From)
	var m Member
	if i >= 0 {
		m = r[i]
	} else {
		m = Member{Address: e.From, JoinedAt: e.ReceivedAt}
	}
	old := m
	m.LastSeen = e.ReceivedAt
	body, _ := e.Body.(map[string]any)
	where := "the room timeline, id " + e.ID
	if e.Type != TypeLeave && body != nil {
		if v, ok := body["caps"]; ok {
			m.Caps = caps(v)
			m.noteCut("caps", cutCaps(&m.Caps), where)
		}
		for key, dst := range map[string]*string{"claim": &m.Claim, "display": &m.Display, "parent": &m.Parent, "role": &m.Role} {
			if v, ok := body[key]; ok {
				*dst = scalar(v, key == "claim")
				m.noteCut(key, cutString(dst, fieldLimit[key]), where)
			}
		}
	}
	if m.Role == "" {
		m.Role = "actor"
	}
	if s := scalar(body["status"], false); s != "" {
		m.Status = s
		m.noteCut("status", cutString(&m.Status, MaxFieldBytes), where)
	} else if e.Type == TypeLeave {
		m.Status = "left"
	} else if m.Status == "" {
		m.Status = "present"
	}
	out = slices.Clone(r)
	if i < 0 {
		return append(out, m), true
	}
	out[i] = m
	return out, !m.sameBut(old)
}

// caps reads body.caps: an array of values or a comma-separated string.
func caps(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, c := range x {
			if s := scalar(c, true); s != "" {
				out = append(out, s)
			}
		}
	case string:
		for _, c := range strings.Split(x, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out = append(out, c)
			}
		}
	}
	return out
}

// scalar formats a JSON scalar as a string; with objects true an object
// or array becomes its compact JSON. Anything else is "".
func scalar(v any, objects bool) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case json.Number:
		return x.String()
	case bool:
		return fmt.Sprint(x)
	case float64, int:
		return fmt.Sprint(x)
	}
	if !objects {
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// rosterFile is roster.json: {"room":"main","members":{<address>:{…}}},
// members in join order.
func encodeRoster(r Roster) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n  \"room\": \"" + Name + "\",\n  \"members\": {")
	for i, m := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Address)
		v, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encode roster member %s: %w", m.Address, err)
		}
		b.WriteString("\n    ")
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
	}
	if len(r) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("}\n}\n")
	return b.Bytes(), nil
}

// ErrCorrupt marks a JSON state file (roster.json, compaction.json,
// communication.json) that does not decode. Readers report it; writers
// keep a copy (<name>.corrupt) before replacing it.
var ErrCorrupt = errors.New("corrupt state file")

// decodeRoster reads roster.json: the members object in file order (the
// members may also be the top-level object, keyed by address).
func decodeRoster(data []byte) (Roster, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	members := json.RawMessage(data)
	if raw, ok := top["members"]; ok {
		members = raw
	}
	dec := json.NewDecoder(bytes.NewReader(members))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("members is not an object")
	}
	var r Roster
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		addr, _ := tok.(string)
		var m Member
		if err := dec.Decode(&m); err != nil {
			if addr == "room" || addr == "members" {
				continue // the top-level form's other keys
			}
			return nil, fmt.Errorf("member %s: %w", addr, err)
		}
		if m.Address == "" {
			m.Address = addr
		}
		r = append(r, m)
	}
	return r, nil
}

// LoadRoster reads a run's room roster in join order. A missing roster is
// empty; a corrupt one is an error wrapping ErrCorrupt.
func LoadRoster(dir string) (Roster, error) {
	path := filepath.Join(RoomDir(dir), RosterFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Roster{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read roster: %w", err)
	}
	r, err := decodeRoster(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w: %v", path, ErrCorrupt, err)
	}
	return r, nil
}

// writeRoster replaces roster.json; a corrupt file is kept as
// roster.json.corrupt first.
func writeRoster(path string, r Roster, corrupt bool) error {
	data, err := encodeRoster(r)
	if err != nil {
		return err
	}
	if corrupt {
		if err := os.Rename(path, path+".corrupt"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("keep corrupt roster: %w", err)
		}
	}
	return fsutil.WriteFile(path, data, 0o600)
}

// TypeJoin is the type of the entries that add a member to a roster.
const TypeJoin = "actor.join"

// Summaries of the join entries the runtime writes.
const (
	RunJoinSummary    = "Run joined default room"
	BranchJoinSummary = "Branch joined default room"
)

// ensure appends an actor.join entry from address when the roster does
// not have it yet, and reports whether it did.
func (rt *roomTx) ensure(address string, body map[string]any, summary string) (bool, error) {
	if rt.roster.Find(address) >= 0 {
		return false, nil
	}
	env := mailbox.Envelope{To: "room:" + rt.run, Type: TypeJoin, From: address, Body: body, Summary: summary}
	if _, _, err := rt.append(env); err != nil {
		return false, err
	}
	return true, nil
}

// EnsureDefaultRoom puts the run in its own room: when run:<run> is not
// in the roster, it appends actor.join from run:<run> (body {role: run,
// status: present}, summary "Run joined default room") and writes the
// run's communication snapshot. Calling it again only returns the
// counts. The kernel calls it after every spawn, so a fresh run has one
// message and one member. The join rings no doorbell (no room.message
// wake): it is the run's own entry, made as the run starts, and nobody
// waits for it — a spawn creates one file fewer.
func EnsureDefaultRoom(dir, run string) (Counts, error) {
	c, _, err := ensureMember(dir, run, "run:"+run, runJoinBody(), RunJoinSummary, false)
	return c, err
}

// runJoinBody is the body of a run's own join to its default room.
func runJoinBody() map[string]any { return map[string]any{"role": "run", "status": "present"} }

// SeedDefaultRoom writes what EnsureDefaultRoom writes for a new run —
// the run's actor.join entry, the roster holding the run and the run's
// communication snapshot — into dir, a state directory no other process
// opens yet (a run's staging directory, before the rename that
// publishes it: runs.Spec.Seed). The files are created in place, with no
// room lock, temporary files or fsyncs: they appear whole with run.json.
// Like every timeline entry they survive any process crash but not a
// crash of the machine, which also ends the run they describe.
func SeedDefaultRoom(dir, run string) error {
	self := "run:" + run
	now := time.Now()
	e := Entry{Envelope: mailbox.Envelope{ID: mailbox.NewID(), To: "room:" + run, Type: TypeJoin, From: self, Body: runJoinBody(), Summary: RunJoinSummary},
		ReceivedAt: formatTime(now)}
	r, _ := Roster(nil).apply(e)
	roster, err := encodeRoster(r)
	if err != nil {
		return err
	}
	snap, err := fsutil.MarshalIndent(NewSnapshot(dir, run, self, r, now))
	if err != nil {
		return fmt.Errorf("encode communication snapshot: %w", err)
	}
	if err := os.MkdirAll(RoomDir(dir), 0o700); err != nil {
		return fmt.Errorf("make room:%s: %w", run, err)
	}
	if err := mailbox.Create(TimelinePath(dir), e); err != nil {
		return err
	}
	if err := fsutil.CreateFile(filepath.Join(RoomDir(dir), RosterFile), roster, 0o600, false); err != nil {
		return err
	}
	return fsutil.CreateFile(filepath.Join(dir, CommunicationFile), snap, 0o600, false)
}

// EnsureMember adds address (run:<run> or a branch of the run) to the
// run's room with an actor.join entry carrying body and summary, unless
// it is already a member (whatever its status: a member that left stays
// left). It writes the member's and the run's communication snapshots
// when due and reports whether it joined the member.
func EnsureMember(dir, run, address string, body map[string]any, summary string) (Counts, bool, error) {
	return ensureMember(dir, run, address, body, summary, true)
}

// ensureMember is EnsureMember; ring false writes no wake for the join.
func ensureMember(dir, run, address string, body map[string]any, summary string, ring bool) (Counts, bool, error) {
	a, err := sameRun(address, run, "member")
	if err != nil {
		return Counts{}, false, err
	}
	var joined bool
	c, err := withRoom(dir, run, func(rt *roomTx) error {
		rt.quiet = !ring
		var err error
		if joined, err = rt.ensure(a.String(), body, summary); err != nil {
			return err
		}
		if a.Kind == mailbox.KindBranch {
			rt.snapshot(a.String())
		}
		rt.snapshot("run:" + run)
		return nil
	})
	if err != nil {
		return Counts{}, false, fmt.Errorf("join %s to room:%s: %w", address, run, err)
	}
	return c, joined, nil
}

// sameRun parses address and checks that it is run:<run> or
// branch:<run>/<b>; what names the address in the error.
func sameRun(address, run, what string) (mailbox.Address, error) {
	a, err := mailbox.Parse(address)
	if err == nil && (a.Kind == mailbox.KindRun || a.Kind == mailbox.KindBranch) && a.ID == run {
		return a, nil
	}
	return mailbox.Address{}, &mailbox.EnvelopeError{Field: what, Err: err,
		Msg: fmt.Sprintf("room:%s %s must be run:%s or branch:%s/<branch>; got %s", run, what, run, run, address)}
}

// branchJoinBody is the body of a branch's automatic join.
func branchJoinBody(run string) map[string]any {
	return map[string]any{"parent": "run:" + run, "role": "branch", "status": "present"}
}
