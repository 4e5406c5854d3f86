package verbs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// CheckCaller refuses a caller identity that cannot be written into a
// record line or named in an address: the session (session=,
// $PI_ACTORS_SESSION) and what caused the call (cause=, a front door's
// tool call or request id) are tokens — letters, digits, '.', '_' and '-',
// a session at most 128 bytes, a cause's ids 256 (a newline in one forged
// rows of session list and lines of the trace). The CLI checks before it
// starts a kernel; the kernel checks every request again.
func CheckCaller(session string, cause *wire.Cause) error {
	if session != "" && !mailbox.ValidToken(session) {
		return callerError("session", session, mailbox.MaxToken, "pass session=<token> or set PI_ACTORS_SESSION to one")
	}
	if cause == nil {
		return nil
	}
	for _, f := range []struct{ name, value, fix string }{
		{"cause", cause.Message, "pass the id of the message the call answers"},
		{"cause.run", cause.Run, "a run id"},
		{"cause.tool_call", cause.ToolCall, "the front door's tool call id"},
		{"cause.mcp_request", cause.MCPRequest, "the front door's request id"},
		{"cause.node", cause.Node, "a node name"},
		{"cause.session", cause.Session, "a session id"},
	} {
		if f.value != "" && (len(f.value) > maxCauseID || !mailbox.ValidRecordID(f.value)) {
			return callerError(f.name, f.value, maxCauseID, f.fix)
		}
	}
	return nil
}

// AllSessions is the session word that means every session (ps
// session=all, kill all session=all, inspect target=session:all): no
// session has that name, so none owns a run or is suspended under it.
const AllSessions = "all"

// CheckOwner refuses a session that would own a run or be suspended or
// resumed: AllSessions is every session's, never one's own.
func CheckOwner(field, session string) error {
	if strings.TrimSpace(session) != AllSessions {
		return nil
	}
	return &Error{Exit: ExitDataErr, Code: "invalid_data",
		Message: fmt.Sprintf("%s=all is no session of its own: all means every session (ps session=all, kill all session=all)", field),
		Hint:    "name a session of your own: " + field + "=<token>, or leave it out"}
}

// maxCauseID bounds a cause's ids: record ids (a follow-up's is its run id
// and more), not address tokens.
const maxCauseID = 256

func callerError(name, value string, max int, fix string) error {
	return &Error{Exit: ExitDataErr, Code: "invalid_data",
		Message: fmt.Sprintf("%s must be a token of letters, digits, '.', '_' and '-' of at most %d bytes (got %s)", name, max, strconv.Quote(cutRunes(value, 60))),
		Hint:    fix}
}

// CauseID is an id a front door takes from its client (a JSON-RPC request
// id, pi's tool call id) as a cause token: itself when it is one, else a
// digest of it ("id-" and 16 hex digits), the same for the same id.
func CauseID(id string) string {
	if id == "" || len(id) <= maxCauseID && mailbox.ValidRecordID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "id-" + hex.EncodeToString(sum[:8])
}
