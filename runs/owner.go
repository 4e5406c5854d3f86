package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// OwnerError refuses a session that does not own a run. It matches
// ErrDenied.
type OwnerError struct {
	Run, Owner, Current string
}

func (e *OwnerError) Error() string {
	cur := e.Current
	if cur == "" {
		cur = "none"
	}
	return fmt.Sprintf("run:%s reason=session_mismatch owner_session=%s current_session=%s hint=inspect_session:%s", e.Run, e.Owner, cur, e.Owner)
}

// Is makes errors.Is(err, ErrDenied) true.
func (e *OwnerError) Is(target error) bool { return target == ErrDenied }

// CheckOwner refuses a session other than the run's owner. Unowned runs,
// and callers without a session, pass.
func CheckOwner(session string, m *Meta) error {
	if session == "" || m.OwnerID == "" || session == m.OwnerID {
		return nil
	}
	return &OwnerError{Run: m.Run, Owner: m.OwnerID, Current: session}
}

// Resolve finds the state directory of run:<id>: the default <runs>/<id>,
// else the newest indexed run with that id (a custom state_dir).
func Resolve(agentDir, id string) (Dir, error) {
	if err := ValidID(id); err != nil {
		return "", err
	}
	d := StateDirFor(agentDir, id)
	if d.Exists(RunFile) || d.Exists(TombstoneFile) {
		return d, nil
	}
	if _, err := os.Stat(string(d)); errors.Is(err, fs.ErrPermission) {
		return "", fmt.Errorf("run:%s: %w", id, err) // another user's agent root
	}
	if entries, err := NewIndex(agentDir).Entries(); err == nil {
		for _, e := range entries {
			if e.Run == id {
				return Dir(e.StateDir), nil
			}
		}
	}
	return "", fmt.Errorf("%w: run:%s (inspect target=session:all view=runs lists runs)", ErrNotFound, id)
}

// Access finds run:<id>, derives its status now and checks that session
// may use it: the one way every verb reaches a run by address.
func Access(agentDir, id, session string) (*Info, error) {
	dir, err := Resolve(agentDir, id)
	if err != nil {
		return nil, err
	}
	in, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if err := CheckOwner(session, in.Meta); err != nil {
		return nil, err
	}
	return in, nil
}
