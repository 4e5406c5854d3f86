package verbs

import (
	"context"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// The room:<run>, branch:<run>/<b>, run:<id> view=communication and
// dead_letters views read the run's room files directly (package rooms),
// after the same session check as the run views, so they work while the
// kernel is down. They never write.

// roomViews are the views of room:<run>.
var roomViews = []string{"status", "messages", "previews", "roster", "contacts"}

func init() {
	inspectRoutes["room"] = &inspectRoute{name: "room:<run>", views: roomViews, handle: inspectRoom}
	inspectRoutes["branch"] = &inspectRoute{name: "branch:<run>/<branch>", views: []string{"mailbox"}, handle: inspectBranch}

	runViews = append(runViews, "communication", "dead_letters")
	run := inspectRoutes["run"]
	run.views = runViews
	runHandle := run.handle
	run.handle = func(ctx context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
		switch q.view {
		case "communication", "dead_letters":
			in, err := loadInspectRun(env, q.target.id)
			if err != nil {
				return nil, err
			}
			if q.view == "communication" {
				return runCommunicationView(in)
			}
			return runDeadLettersView(in, q.lines)
		}
		return runHandle(ctx, env, q)
	}

	co := inspectRoutes["coordinator"]
	co.views = append(co.views, "dead_letters")
	coHandle := co.handle
	co.handle = func(ctx context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
		if q.view == "dead_letters" {
			return coordinatorDeadLetters(env, q.lines)
		}
		return coHandle(ctx, env, q)
	}
}

// inspectAddress parses a room or branch target and finds its run,
// checking the caller's session.
func inspectAddress(env *Env, raw string) (mailbox.Address, *runs.Info, error) {
	a, err := mailbox.Parse(raw)
	if err != nil {
		return a, nil, &Error{Exit: ExitDataErr, Code: "invalid_address", Message: err.Error(), Hint: "inspect target=session:all view=runs lists runs"}
	}
	in, err := loadInspectRun(env, a.ID)
	return a, in, err
}

// inspectRoom answers target=room:<run>.
func inspectRoom(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	_, in, err := inspectAddress(env, q.target.raw)
	if err != nil {
		return nil, err
	}
	dir := string(in.FilesDir())
	type view interface{ Text() string }
	var v view
	var details any
	switch q.view {
	case "status":
		var s rooms.RoomStatus
		s, err = rooms.Status(dir)
		v, details = s, boundRoomStatus(dir, s)
	case "messages":
		var m rooms.MessagesView
		m, err = rooms.Messages(dir, q.lines)
		v, details = m, boundedMessages{Messages: boundRecords(m.Messages, func(e rooms.Entry) cutWhere { return cutWhere{File: m.File, ID: e.ID} }),
			Corrupted: m.Corrupted, Total: m.Total, File: m.File}
	case "previews":
		var p rooms.PreviewsView
		p, err = rooms.Previews(dir, q.lines)
		v, details = p, boundedPreviews{Previews: boundRecords(p.Previews, func(rooms.Preview) cutWhere { return cutWhere{File: p.File} }), Total: p.Total, File: p.File}
	case "roster":
		var r rooms.RosterView
		r, err = rooms.RosterOf(dir, q.lines)
		v, details = r, boundedRoster{Roster: boundRecords(r.Roster, func(m rooms.Member) cutWhere { return cutWhere{File: r.File} }), Total: r.Total, File: r.File}
	case "contacts":
		var c rooms.ContactsView
		c, err = rooms.ContactsOf(dir, "", q.lines)
		v, details = c, boundedContacts{Contacts: boundRecords(c.Contacts, func(rooms.Contact) cutWhere { return cutWhere{File: c.File} }), Total: c.Total, File: c.File}
	}
	if err != nil {
		return nil, err
	}
	if details == nil {
		details = v
	}
	return &inspectOutput{text: v.Text(), details: details}, nil
}

// The room, branch and dead-letter views in --json: the rooms package's
// views with each message bounded (boundRecord), the same keys in the
// same order.
type (
	boundedMessages struct {
		Messages  []any  `json:"messages"`
		Corrupted int    `json:"corrupted,omitempty"`
		Total     int    `json:"total"`
		File      string `json:"file"`
	}
	boundedRoster struct {
		Roster []any  `json:"roster"`
		Total  int    `json:"total"`
		File   string `json:"file"`
	}
	boundedContacts struct {
		Contacts []any  `json:"contacts"`
		Total    int    `json:"total"`
		File     string `json:"file"`
	}
	boundedPreviews struct {
		Previews []any  `json:"previews"`
		Total    int    `json:"total"`
		File     string `json:"file"`
	}
	boundedMailbox struct {
		Corrupted int    `json:"corrupted"`
		Messages  []any  `json:"messages"`
		File      string `json:"file"`
		Total     int    `json:"total"`
	}
	boundedDeadLetters struct {
		DeadLetters []any  `json:"dead_letters"`
		Corrupted   int    `json:"corrupted"`
		Total       int    `json:"total"`
		File        string `json:"file"`
	}
)

// boundRoomStatus is the room status with a summary over the bound cut;
// the whole is the newest entry's, in the timeline.
func boundRoomStatus(dir string, s rooms.RoomStatus) any {
	if len(s.LastMessageSummary) <= viewValueBytes {
		return s
	}
	where := cutWhere{File: s.File}
	if m, err := rooms.Messages(dir, 1); err == nil && len(m.Messages) == 1 && m.Messages[0].ReceivedAt == s.LastMessageAt {
		where.ID = m.Messages[0].ID
	}
	return boundRecord(s, where)
}

// boundDeadLetters bounds each dead letter's message; a record's file is
// file, or — perRun, the coordinator's merged view — its run's dead-letter
// log when it has a run.
func boundDeadLetters(v rooms.DeadLettersView, file string, perRun bool) boundedDeadLetters {
	where := func(d rooms.DeadLetterRecord) cutWhere {
		f := file
		if perRun && d.StateDir != "" {
			f = filepath.Join(d.StateDir, rooms.DeadLettersFile)
		}
		return cutWhere{File: f, ID: d.ID}
	}
	return boundedDeadLetters{DeadLetters: boundRecords(v.DeadLetters, where, "message"), Corrupted: v.Corrupted, Total: v.Total, File: v.File}
}

// inspectBranch answers target=branch:<run>/<b> view=mailbox.
func inspectBranch(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	a, in, err := inspectAddress(env, q.target.raw)
	if err != nil {
		return nil, err
	}
	v, err := rooms.BranchMailbox(string(in.FilesDir()), a.String(), q.lines)
	if err != nil {
		return nil, err
	}
	details := boundedMailbox{Messages: boundRecords(v.Messages, func(r mailbox.Record) cutWhere { return cutWhere{File: v.File, ID: r.ID()} }),
		Corrupted: v.Corrupted, File: v.File, Total: v.Total}
	return &inspectOutput{text: v.Text(), details: details}, nil
}

// runCommunicationView is run:<id> view=communication: the run's
// communication snapshot.
func runCommunicationView(in *runs.Info) (*inspectOutput, error) {
	v, err := rooms.Communication(string(in.FilesDir()), "")
	if err != nil {
		return nil, err
	}
	return &inspectOutput{text: v.Text(), details: v}, nil
}

// runDeadLettersView is run:<id> view=dead_letters: the messages to the
// run (its room, its branches) that expired or could not be delivered.
func runDeadLettersView(in *runs.Info, lines int) (*inspectOutput, error) {
	v, err := rooms.DeadLetters(filepath.Join(string(in.FilesDir()), rooms.DeadLettersFile), lines)
	if err != nil {
		return nil, err
	}
	return &inspectOutput{text: v.Text(), details: boundDeadLetters(v, v.File, false)}, nil
}

// CoordinatorDeadLetters is the coordinator's dead-letter log: messages
// with no run to hold them.
func CoordinatorDeadLetters(agentDir string) string {
	return filepath.Join(wire.TmpDir(agentDir), rooms.DeadLettersFile)
}

// coordinatorDeadLetters is coordinator view=dead_letters: the
// coordinator's own log (messages to runs that do not exist, expired
// messages to tools) merged with the logs of the calling session's runs,
// the session's records only (every one without a session), newest last.
func coordinatorDeadLetters(env *Env, lines int) (*inspectOutput, error) {
	all, err := rooms.SessionDeadLetters(CoordinatorDeadLetters(env.AgentDir), env.Session, lines)
	if err != nil {
		return nil, err
	}
	list, err := runs.NewIndex(env.AgentDir).List("all")
	if err != nil {
		return nil, err
	}
	session := strings.TrimSpace(env.Session)
	files := []string{all.File}
	for _, in := range list {
		if session != "" && in.Meta.OwnerID != session {
			continue
		}
		path := filepath.Join(string(in.FilesDir()), rooms.DeadLettersFile)
		v, err := rooms.DeadLetters(path, lines)
		if err != nil || v.Total == 0 {
			continue
		}
		all.DeadLetters = append(all.DeadLetters, v.DeadLetters...)
		all.Corrupted += v.Corrupted
		all.Total += v.Total
		files = append(files, path)
	}
	sort.SliceStable(all.DeadLetters, func(i, j int) bool { return all.DeadLetters[i].TS < all.DeadLetters[j].TS })
	if n := len(all.DeadLetters); n > lines {
		all.DeadLetters = all.DeadLetters[n-lines:]
	}
	if len(files) > 1 {
		all.File = strings.Join(files, ", ")
	}
	return &inspectOutput{text: all.Text(), details: boundDeadLetters(all, CoordinatorDeadLetters(env.AgentDir), true)}, nil
}
