package mailbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// catchUp reads the lines added since the last call (the whole file
// after a rewrite by anyone) and folds them into the state. The caller
// holds the lock, so only a crashed writer's torn tail can be incomplete.
func (st *queueState) catchUp(path string) error {
	if st.f == nil || st.f.Path != path {
		st.f = NewFollower(path)
		st.reset()
	}
	lines, reset, err := st.f.next()
	if err != nil {
		return err
	}
	if reset {
		st.reset()
	}
	for _, l := range lines {
		st.add(l)
	}
	return nil
}

func (st *queueState) reset() {
	*st = queueState{f: st.f, recs: st.recs[:0], byID: map[string]int{}}
}

// add folds one line: a record is appended, an update applied to its
// record, a malformed line or an update of an unknown record ignored.
func (st *queueState) add(l Line) {
	m, ok := rawObject(l.Raw)
	if !ok {
		return
	}
	status := rawStatus(m["status"])
	if status == StatusUpdate {
		ref, _ := rawString(m["ref"])
		if i, ok := st.byID[strings.TrimSpace(ref)]; ok && len(m["set"]) > 0 {
			st.apply(i, m["set"])
			st.updates++
		}
		return
	}
	r := qrec{id: rawID(m["id"]), off: l.Off, n: len(l.Raw)}
	if _, dup := st.byID[r.id]; r.id == "" || dup {
		r.unsafeID = true
		st.unsafeID++
	} else {
		st.byID[r.id] = len(st.recs)
	}
	st.recs = append(st.recs, r)
	st.setFields(len(st.recs)-1, status, m)
}

// apply records one update set of record i.
func (st *queueState) apply(i int, set json.RawMessage) {
	m, ok := rawObject(set)
	if !ok {
		return
	}
	st.recs[i].sets = append(st.recs[i].sets, set)
	status := st.recs[i].status
	if v, ok := m["status"]; ok {
		status = rawStatus(v)
	}
	st.setFields(i, status, m)
}

// setFields sets record i's status and claim fields from m.
func (st *queueState) setFields(i int, status string, m map[string]json.RawMessage) {
	r := &st.recs[i]
	if isTerminalStatus(r.status) {
		st.terminal--
	}
	r.status = status
	if isTerminalStatus(status) {
		st.terminal++
	}
	if v, ok := m["claimed_at"]; ok {
		// A claim (a first one or a takeover): what an earlier claim
		// recorded of its consumer no longer applies.
		s, _ := rawString(v)
		r.claimedAt, _ = time.Parse(time.RFC3339Nano, s)
		r.pid, r.pidStart, r.by, r.renewedAt = 0, 0, "", time.Time{}
	}
	if v, ok := m["claimed_by"]; ok {
		r.by, _ = rawString(v)
	}
	if v, ok := m["claimed_pid"]; ok {
		r.pid, _ = strconv.Atoi(string(v))
	}
	if v, ok := m["claimed_pid_start"]; ok {
		r.pidStart, _ = strconv.ParseUint(string(v), 10, 64)
	}
	if v, ok := m["lease_renewed_at"]; ok {
		s, _ := rawString(v)
		r.renewedAt, _ = time.Parse(time.RFC3339Nano, s)
	}
	for st.head < len(st.recs) && isTerminalStatus(st.recs[st.head].status) {
		st.head++
	}
}

func isTerminalStatus(s string) bool { return s == StatusHandled || s == StatusFailed }

// rawObject decodes the top level of a JSON object line, keeping the
// values raw; ok is false for a malformed line (as Line.Err would be).
func rawObject(raw []byte) (m map[string]json.RawMessage, ok bool) {
	b := bytes.TrimLeft(raw, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return nil, false
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, false
	}
	return m, true
}

// rawString decodes a JSON string value.
func rawString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// rawStatus is Record.Status for a raw value: a non-empty string, else
// queued.
func rawStatus(v json.RawMessage) string {
	if s, ok := rawString(v); ok && s != "" {
		return s
	}
	return StatusQueued
}

// rawID is Record.ID for a raw value: a trimmed string or a number's
// literal, else "".
func rawID(v json.RawMessage) string {
	if s, ok := rawString(v); ok {
		return strings.TrimSpace(s)
	}
	if len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return string(v)
	}
	return ""
}

// String describes the state (for test failures).
func (st *queueState) String() string {
	return fmt.Sprintf("records=%d head=%d updates=%d terminal=%d unsafe_ids=%d", len(st.recs), st.head, st.updates, st.terminal, st.unsafeID)
}
