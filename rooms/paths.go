package rooms

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
)

// Name is the name of a run's one room.
const Name = "main"

// File names inside a run's state directory.
const (
	MessagesFile      = "messages.jsonl"     // rooms/main/: the timeline
	RosterFile        = "roster.json"        // rooms/main/: the members
	CompactionFile    = "compaction.json"    // rooms/main/: the last compaction
	CommunicationFile = "communication.json" // the run's, and branches/<b>/: snapshots
	InboxFile         = "inbox.jsonl"        // branches/<b>/: the branch inbox
	DeadLettersFile   = "dead_letters.jsonl" // expired and undeliverable messages
	WakeFile          = "wake.jsonl"         // the run's doorbell
	RunInboxFile      = "inbox.jsonl"        // the run's own inbox (forwards)
)

// Environment variables that tune the limits (see Limits).
const (
	EnvRoomMaxMessages    = "PI_ACTORS_ROOM_MAX_MESSAGES"
	EnvRosterMinMS        = "PI_ACTORS_ROOM_ROSTER_MIN_MS"
	EnvSnapshotMinMS      = "PI_ACTORS_COMMUNICATION_SNAPSHOT_MIN_MS"
	EnvBranchRetained     = "PI_ACTORS_BRANCH_INBOX_TERMINAL_RETAINED"
	EnvBranchClaimLeaseMS = "PI_ACTORS_BRANCH_CLAIM_LEASE_MS"
)

// Limits are the tunable bounds of rooms and branch inboxes.
type Limits struct {
	// MaxMessages is the timeline length compaction keeps (default 10000).
	MaxMessages int
	// RosterMin is how fresh roster.json may be for a write that would
	// only move a member's last_seen to be skipped (default 250 ms).
	RosterMin time.Duration
	// SnapshotMin is how fresh a communication.json may be for a rewrite
	// that would only move its updated_at to be skipped (default 250 ms).
	SnapshotMin time.Duration
	// BranchRetained is how many handled/failed records a branch inbox
	// keeps (default 2000; 0 keeps none).
	BranchRetained int
	// ClaimLease is how long a branch claim may stay unfinished before
	// another claimer takes it over (default 5 min; a claim whose process
	// is gone is taken over at once).
	ClaimLease time.Duration
}

// DefaultLimits are the limits without environment overrides.
var DefaultLimits = Limits{MaxMessages: 10000, RosterMin: 250 * time.Millisecond, SnapshotMin: 250 * time.Millisecond,
	BranchRetained: 2000, ClaimLease: 5 * time.Minute}

// EnvLimits returns DefaultLimits with the environment's overrides; an
// override that is not a valid number is ignored. It is read on every
// operation, so a test (or an operator) may change it at any time.
func EnvLimits() Limits {
	l := DefaultLimits
	if n, ok := envInt(EnvRoomMaxMessages); ok && n > 0 {
		l.MaxMessages = n
	}
	if n, ok := envInt(EnvRosterMinMS); ok && n >= 0 {
		l.RosterMin = time.Duration(n) * time.Millisecond
	}
	if n, ok := envInt(EnvSnapshotMinMS); ok && n >= 0 {
		l.SnapshotMin = time.Duration(n) * time.Millisecond
	}
	if n, ok := envInt(EnvBranchRetained); ok && n >= 0 {
		l.BranchRetained = n
	}
	if n, ok := envInt(EnvBranchClaimLeaseMS); ok && n > 0 {
		l.ClaimLease = time.Duration(n) * time.Millisecond
	}
	return l
}

func envInt(name string) (int, bool) {
	s := strings.TrimSpace(os.Getenv(name))
	if s == "" {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// RoomDir is the directory of a run's room: <dir>/rooms/main.
func RoomDir(dir string) string { return filepath.Join(dir, "rooms", Name) }

// BranchDir is the directory of a branch of a run: <dir>/branches/<b>.
func BranchDir(dir, branch string) string { return filepath.Join(dir, "branches", branch) }

// TimelinePath is the room timeline: <dir>/rooms/main/messages.jsonl.
func TimelinePath(dir string) string { return filepath.Join(RoomDir(dir), MessagesFile) }

// BranchInboxPath is a branch inbox: <dir>/branches/<b>/inbox.jsonl.
func BranchInboxPath(dir, branch string) string {
	return filepath.Join(BranchDir(dir, branch), InboxFile)
}

// checkBranch validates a branch id that becomes a path element.
func checkBranch(branch string) error {
	a, err := mailbox.Parse("branch:r/" + branch)
	if err != nil || a.Branch != branch {
		return &mailbox.EnvelopeError{Field: "branch", Msg: fmt.Sprintf("branch id %q is not a token of letters, digits, '.', '_' and '-'", branch), Err: err}
	}
	return nil
}
