package rooms

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
)

// RoomStatus is the room status view.
type RoomStatus struct {
	LastMessageAt      string      `json:"last_message_at,omitempty"`
	LastMessageFrom    string      `json:"last_message_from,omitempty"`
	LastMessageSummary string      `json:"last_message_summary,omitempty"`
	LastMessageType    string      `json:"last_message_type,omitempty"`
	Compaction         *Compaction `json:"compaction,omitempty"`
	Diagnostics        []string    `json:"diagnostics,omitempty"`
	DiagnosticsCount   int         `json:"diagnostics_count,omitempty"`
	Counts
	Room string `json:"room"`
	File string `json:"file"`
}

// Status reads a run's room status: the timeline's line count, the roster
// size, the newest entry, the last compaction, and diagnostics — every
// malformed timeline line and a corrupt roster.json or compaction.json
// (the first five listed as <path>[:<line>]: <error>).
func Status(dir string) (RoomStatus, error) {
	path := TimelinePath(dir)
	s := RoomStatus{Room: Name, File: path}
	lines, err := mailbox.Read(path)
	if err != nil {
		return s, err
	}
	if s.MessageCount, err = mailbox.CountLines(path); err != nil {
		return s, err
	}
	diag := func(msg string) {
		s.DiagnosticsCount++
		if len(s.Diagnostics) < maxDiagnostics {
			s.Diagnostics = append(s.Diagnostics, msg)
		}
	}
	var last *Entry
	for _, l := range lines {
		if l.Err != nil {
			diag(fmt.Sprintf("%s:%d: %v: %.*q", path, l.N, l.Err, diagnosticRawSpan, l.Raw))
			continue
		}
		e := entryFrom(l.Value)
		last = &e
	}
	if last != nil {
		s.LastMessageAt, s.LastMessageFrom, s.LastMessageSummary, s.LastMessageType = last.ReceivedAt, last.From, last.Summary, last.Type
	}
	roster, err := LoadRoster(dir)
	switch {
	case errors.Is(err, ErrCorrupt):
		diag(err.Error())
	case err != nil:
		return s, err
	}
	s.RosterCount = len(roster)
	s.Compaction, err = LoadCompaction(dir)
	switch {
	case errors.Is(err, ErrCorrupt):
		diag(err.Error())
	case err != nil:
		return s, err
	}
	return s, nil
}

// Text renders room=main messages=N roster=M[ diagnostics=K]
// [ last_message_at=…][ last_from=…][ last_type=…][ last_summary=…].
func (s RoomStatus) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "room=%s messages=%d roster=%d", s.Room, s.MessageCount, s.RosterCount)
	if s.DiagnosticsCount > 0 {
		fmt.Fprintf(&b, " diagnostics=%d", s.DiagnosticsCount)
	}
	for _, kv := range [][2]string{{"last_message_at", s.LastMessageAt}, {"last_from", s.LastMessageFrom}, {"last_type", s.LastMessageType}, {"last_summary", s.LastMessageSummary}} {
		if kv[1] != "" {
			b.WriteString(" " + kv[0] + "=" + compactPreview(kv[1]))
		}
	}
	return b.String()
}

// MessagesView is the room messages view: the newest timeline entries.
type MessagesView struct {
	Messages  []Entry `json:"messages"`
	Corrupted int     `json:"corrupted,omitempty"`
	Total     int     `json:"total"`
	File      string  `json:"file"`
}

// Messages reads the last lines (default 40) of a run's timeline;
// malformed lines are counted, not shown.
func Messages(dir string, lines int) (MessagesView, error) {
	path := TimelinePath(dir)
	v := MessagesView{Messages: []Entry{}, File: path}
	recs, corrupted, total, err := tailRecords(path, defaultLines(lines), entryFrom)
	if err != nil {
		return v, err
	}
	v.Messages, v.Corrupted, v.Total = recs, corrupted, total
	return v, nil
}

// Text renders one line per entry: ts= from= to= type= summary=[ body=].
func (v MessagesView) Text() string {
	var out []string
	for _, e := range v.Messages {
		from := e.From
		if from == "" {
			from = "<unknown>"
		}
		line := fmt.Sprintf("ts=%s from=%s to=%s type=%s summary=%s", e.ReceivedAt, from, e.To, compactPreview(e.Type), compactPreview(e.Summary))
		if body := bodyString(e.Body); body != "" {
			line += " body=" + compactPreview(body)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		out = append(out, "(no room messages)")
	}
	return JoinWithMore(out, len(v.Messages)+v.Corrupted, v.Total, v.File)
}

// Preview is one entry of the previews view.
type Preview struct {
	BodyPreview string `json:"body_preview,omitempty"`
	From        string `json:"from,omitempty"`
	Summary     string `json:"summary,omitempty"`
	Timestamp   string `json:"timestamp"`
	To          string `json:"to"`
	Type        string `json:"type"`
}

// PreviewsView is the room previews view.
type PreviewsView struct {
	Previews []Preview `json:"previews"`
	Total    int       `json:"total"`
	File     string    `json:"file"`
}

// Previews reads the last lines (default 40) of a run's timeline as
// previews: the body as one line of at most 320 characters.
func Previews(dir string, lines int) (PreviewsView, error) {
	m, err := Messages(dir, lines)
	v := PreviewsView{Previews: []Preview{}, Total: m.Total, File: m.File}
	for _, e := range m.Messages {
		v.Previews = append(v.Previews, Preview{BodyPreview: bodyPreview(e.Body), From: e.From, Summary: e.Summary, Timestamp: e.ReceivedAt, To: e.To, Type: e.Type})
	}
	return v, err
}

// Text renders one line per preview: ts= [from=] to= type=[ summary=][ body=].
func (v PreviewsView) Text() string {
	var out []string
	for _, p := range v.Previews {
		line := "ts=" + p.Timestamp
		if p.From != "" {
			line += " from=" + p.From
		}
		line += " to=" + p.To + " type=" + compactPreview(p.Type)
		if p.Summary != "" {
			line += " summary=" + compactPreview(p.Summary)
		}
		if p.BodyPreview != "" {
			line += " body=" + compactPreview(p.BodyPreview)
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		out = append(out, "(no room message previews)")
	}
	return JoinWithMore(out, len(v.Previews), v.Total, v.File)
}

// RosterView is the room roster view.
type RosterView struct {
	Roster Roster `json:"roster"`
	Total  int    `json:"total"` // the room's members; Roster holds the newest
	File   string `json:"file"`  // roster.json
}

// RosterOf reads the roster view of a run's room: the newest lines
// members to join (DefaultLines when lines is 0).
func RosterOf(dir string, lines int) (RosterView, error) {
	r, err := LoadRoster(dir)
	if r == nil {
		r = Roster{}
	}
	total := len(r)
	if n := defaultLines(lines); len(r) > n {
		r = r[len(r)-n:]
	}
	return RosterView{Roster: r, Total: total, File: filepath.Join(RoomDir(dir), RosterFile)}, err
}

// Text renders one line per member: address= role= [parent=] [caps=]
// [claim=] status= last_seen= (an absent optional token leaves its
// space).
func (v RosterView) Text() string {
	var out []string
	for _, m := range v.Roster {
		opt := func(k, val string) string {
			if val == "" {
				return ""
			}
			return k + "=" + val
		}
		out = append(out, fmt.Sprintf("address=%s role=%s %s %s %s status=%s last_seen=%s", m.Address, compactPreview(m.Role),
			opt("parent", m.Parent), opt("caps", compactPreview(strings.Join(m.Caps, ","))), opt("claim", compactPreview(m.Claim)), compactPreview(m.Status), m.LastSeen))
	}
	if len(out) == 0 {
		return "(no room members)"
	}
	return JoinWithMore(out, len(v.Roster), v.Total, v.File)
}

// ContactsView is the room contacts view.
type ContactsView struct {
	Contacts []Contact `json:"contacts"`
	Total    int       `json:"total"` // self's contacts; Contacts holds the newest
	File     string    `json:"file"`  // roster.json
}

// ContactsOf reads the contacts of self in a run's room (every member
// when self is ""): the newest lines to join (DefaultLines when lines is
// 0).
func ContactsOf(dir, self string, lines int) (ContactsView, error) {
	r, err := LoadRoster(dir)
	c := r.Contacts(self)
	if c == nil {
		c = []Contact{}
	}
	total := len(c)
	if n := defaultLines(lines); len(c) > n {
		c = c[len(c)-n:]
	}
	return ContactsView{Contacts: c, Total: total, File: filepath.Join(RoomDir(dir), RosterFile)}, err
}

// Text renders one line per contact: address=[ role=][ parent=][ caps=]
// [ claim=][ status=].
func (v ContactsView) Text() string {
	var out []string
	for _, c := range v.Contacts {
		line := "address=" + c.Address
		for _, kv := range [][2]string{{"role", c.Role}, {"parent", c.Parent}, {"caps", strings.Join(c.Caps, ",")}, {"claim", c.Claim}, {"status", c.Status}} {
			if kv[1] != "" {
				line += " " + kv[0] + "=" + compactPreview(kv[1])
			}
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return "(no room contacts)"
	}
	return JoinWithMore(out, len(v.Contacts), v.Total, v.File)
}

// MailboxView is the branch mailbox view.
type MailboxView struct {
	Corrupted int              `json:"corrupted"`
	Messages  []mailbox.Record `json:"messages"`
	File      string           `json:"file"`
	// Total is the inbox's record count (its status changes applied);
	// the view shows the newest.
	Total int `json:"total"`
}

// BranchMailbox reads the newest records (default 40) of a branch inbox,
// with their claims and status changes applied.
func BranchMailbox(dir, address string, lines int) (MailboxView, error) {
	a, err := branchAddress(address)
	if err != nil {
		return MailboxView{}, err
	}
	q, err := BranchInbox(dir, a.Branch)
	if err != nil {
		return MailboxView{}, err
	}
	v := MailboxView{Messages: []mailbox.Record{}, File: q.Path}
	recs, bad, err := q.List(defaultLines(lines))
	if recs != nil {
		v.Messages = recs
	}
	v.Corrupted = bad
	if err != nil {
		return v, err
	}
	v.Total, err = q.Count()
	return v, err
}

// Text renders one line per record (id= status= type= from= to= and its
// times) and corrupted=N when there are malformed lines.
func (v MailboxView) Text() string {
	var out []string
	for _, r := range v.Messages {
		out = append(out, RecordLine(r))
	}
	if len(out) == 0 {
		out = append(out, "(no branch inbox messages)")
	}
	if v.Corrupted > 0 {
		out = append(out, fmt.Sprintf("corrupted=%d", v.Corrupted))
	}
	return JoinWithMore(out, len(v.Messages), v.Total, v.File)
}

// RecordLine renders an inbox record as the mailbox views do: id=
// status= type= from= to=[ queued_at=][ sent_at=][ claimed_at=]
// [ handled_at=][ failed_at=].
func RecordLine(r mailbox.Record) string {
	line := fmt.Sprintf("id=%s status=%s type=%s from=%s to=%s", compactPreview(r.ID()), r.Status(), compactPreview(r.Type()), compactPreview(str(r, "from")), compactPreview(str(r, "to")))
	for _, k := range []string{"queued_at", "sent_at", "claimed_at", "handled_at", "failed_at"} {
		if v := str(r, k); v != "" {
			line += " " + k + "=" + compactPreview(v)
		}
	}
	return line
}

// CommunicationView is the communication view of a run (or a branch).
type CommunicationView struct {
	Communication *Snapshot `json:"communication"`
	Corrupt       bool      `json:"corrupt,omitempty"`
	File          string    `json:"file"`
}

// Communication reads self's communication snapshot (self is run:<run>
// or branch:<run>/<b>; the run's snapshot when self is ""). A missing or
// corrupt file has no snapshot.
func Communication(dir, self string) (CommunicationView, error) {
	path := filepath.Join(dir, CommunicationFile)
	if self != "" {
		var err error
		if path, err = SnapshotPath(dir, self); err != nil {
			return CommunicationView{}, err
		}
	}
	s, err := LoadSnapshot(path)
	if errors.Is(err, ErrCorrupt) {
		return CommunicationView{Corrupt: true, File: path}, nil
	}
	if s != nil {
		b := s.bounded(filepath.Join(RoomDir(dir), RosterFile))
		s = &b
	}
	return CommunicationView{Communication: s, File: path}, err
}

// Text renders self= root= rooms= updated_at=, or (no communication
// snapshot).
func (v CommunicationView) Text() string {
	s := v.Communication
	if s == nil {
		return "(no communication snapshot)"
	}
	return fmt.Sprintf("self=%s root=%s rooms=%d updated_at=%s", s.Self, s.Root, len(s.Rooms), s.UpdatedAt)
}
