package mailbox

import (
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Address kinds.
const (
	KindCoordinator = "coordinator"
	KindRun         = "run"
	KindSession     = "session"
	KindTool        = "tool"
	KindBranch      = "branch"
	KindRoom        = "room"
	// KindKnowledge is the kernel's knowledge actor: the bare address
	// knowledge, like coordinator, takes no id.
	KindKnowledge = "knowledge"
)

// mainRoom is the only room a run has; room:<run>/main is accepted and
// written as room:<run>.
const mainRoom = "main"

// tokenRe is the grammar of every id inside an address, of run ids and of
// caller-chosen record ids: they become path elements, so nothing else.
var tokenRe = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// MaxToken bounds an id inside an address: it becomes a file or
// directory name (with room for the suffixes beside it), as a run id
// does. Record ids (message ids, follow-up ids) are stored in lines, not
// names, and are not bounded so.
const MaxToken = 128

// validToken reports whether s is a non-empty token that is safe as a
// path element ("." and ".." are not) and at most MaxToken bytes.
func validToken(s string) bool {
	return len(s) <= MaxToken && validID(s)
}

// ValidToken reports whether s can be an id inside an address (a run, a
// session): letters, digits, '.', '_' and '-', at most MaxToken bytes.
func ValidToken(s string) bool { return validToken(s) }

// ValidRecordID reports whether s can be a record's id (a message or
// follow-up id, a copy's <id>@<branch> too): any length.
func ValidRecordID(s string) bool { return validRecordID(s) }

// validID reports whether s is a non-empty token of any length: a
// record's id.
func validID(s string) bool {
	return s != "." && s != ".." && tokenRe.MatchString(s)
}

// CopySep joins the parts of a derived copy id (a branch message's copy
// in its run's inbox, a room entry's copy for a branch): it is outside the
// token grammar, so no caller-chosen id is ever a copy id, and a copy can
// never be taken for a duplicate of a caller's message.
const CopySep = "@"

// ForwardID is the id of a branch message's copy in its run's inbox:
// <id>@<branch>. A copy id already (a room entry's copy) is its own.
func ForwardID(id, branch string) string {
	if id == "" || strings.Contains(id, CopySep) {
		return id
	}
	return id + CopySep + branch
}

// MulticastID is the id of a room entry's copy for a branch:
// <entry>@room@<branch>, apart from every ForwardID (one CopySep).
func MulticastID(entry, branch string) string {
	return entry + CopySep + "room" + CopySep + branch
}

// LegacyCopyID is the copy id written before CopySep (<id>.<branch>, an id
// ending in .<branch> kept): a retry of a message stored then finds its
// copy under it.
func LegacyCopyID(id, branch string) string {
	if id == "" || strings.HasSuffix(id, "."+branch) {
		return id
	}
	return id + "." + branch
}

// validRecordID reports whether s is a record's id: a caller's token or a
// copy id (tokens joined by CopySep).
func validRecordID(s string) bool {
	for _, part := range strings.Split(s, CopySep) {
		if !validID(part) {
			return false
		}
	}
	return true
}

// Address is a parsed actor address. ID is the run id for run, branch and
// room addresses, the session id, or the tool name; Branch is set only for
// branch addresses. Coordinator and knowledge have neither.
type Address struct {
	Kind, ID, Branch string
}

// String returns the canonical form: coordinator, knowledge, run:<id>,
// session:<id>, tool:<name>, branch:<run>/<branch>, room:<run>.
func (a Address) String() string {
	switch a.Kind {
	case "":
		return ""
	case KindCoordinator, KindKnowledge:
		return a.Kind
	case KindBranch:
		return KindBranch + ":" + a.ID + "/" + a.Branch
	}
	return a.Kind + ":" + a.ID
}

// MarshalText writes the canonical form.
func (a Address) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses an address.
func (a *Address) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*a = p
	return nil
}

const kindsHint = "use run:<id>, branch:<run>/<branch>, room:<run>, tool:<name>, session:<id>, coordinator or knowledge"

// Parse parses an actor address. Surrounding space is trimmed, as is the
// space around each id. Errors are *AddressError (errors.Is ErrInvalid).
func Parse(s string) (Address, error) {
	v := strings.TrimSpace(s)
	if v == KindCoordinator || v == KindKnowledge {
		return Address{Kind: v}, nil
	}
	kind, rest, ok := strings.Cut(v, ":")
	if !ok || kind == "" {
		return Address{}, addrErr(s, "actor address must include kind (%s): %q", kindsHint, s)
	}
	switch kind {
	case KindCoordinator, KindKnowledge:
		return Address{}, addrErr(s, "%s address takes no id; use %s: %q", kind, kind, s)
	case KindRun, KindSession, KindTool:
		id := strings.TrimSpace(rest)
		if id == "" {
			return Address{}, addrErr(s, "%s address is required: %q has an empty id; use %s:<id>", kind, s, kind)
		}
		if err := checkToken(s, kind+" id", id); err != nil {
			return Address{}, err
		}
		return Address{Kind: kind, ID: id}, nil
	case KindBranch:
		parts := strings.Split(rest, "/")
		if len(parts) > 2 {
			return Address{}, addrErr(s, "branch address has too many parts: %q; use branch:<run>/<branch>", s)
		}
		run := strings.TrimSpace(parts[0])
		if run == "" {
			return Address{}, addrErr(s, "branch run is required: %q; use branch:<run>/<branch>", s)
		}
		if len(parts) < 2 || strings.TrimSpace(parts[1]) == "" {
			return Address{}, addrErr(s, "branch id is required: %q; use branch:<run>/<branch>", s)
		}
		branch := strings.TrimSpace(parts[1])
		if err := checkToken(s, "branch run", run); err != nil {
			return Address{}, err
		}
		if err := checkToken(s, "branch id", branch); err != nil {
			return Address{}, err
		}
		return Address{Kind: KindBranch, ID: run, Branch: branch}, nil
	case KindRoom:
		parts := strings.Split(rest, "/")
		if len(parts) > 2 {
			return Address{}, addrErr(s, "room address has too many parts: %q; use room:<run>", s)
		}
		run := strings.TrimSpace(parts[0])
		if run == "" {
			return Address{}, addrErr(s, "room address is required: %q has an empty run id; use room:<run>", s)
		}
		if err := checkToken(s, "room run", run); err != nil {
			return Address{}, err
		}
		if len(parts) == 2 && strings.TrimSpace(parts[1]) != mainRoom {
			return Address{}, addrErr(s, "task rooms do not support named subrooms (%q); use room:%s", s, run)
		}
		return Address{Kind: KindRoom, ID: run}, nil
	}
	return Address{}, addrErr(s, "unsupported actor address kind %q in %q; %s", kind, s, kindsHint)
}

func checkToken(input, label, v string) error {
	if validToken(v) {
		return nil
	}
	if len(v) > MaxToken && tokenRe.MatchString(v) {
		return addrErr(input, "%s %q… is %d bytes, longer than %d; use a shorter id", label, v[:32], len(v), MaxToken)
	}
	if strings.Contains(v, "@") {
		return addrErr(input, "%s %q names a node: node-qualified addresses (run:<id>@<node>) are accepted by message to=, inspect target=, logs, mailbox address=, watch target= and the short verbs of a clustered kernel", label, v)
	}
	return addrErr(input, "%s contains unsupported characters: %q; use letters, digits, '.', '_' and '-' (not . or ..)", label, v)
}

func addrErr(input, format string, args ...any) *AddressError {
	return &AddressError{Input: input, Msg: fmt.Sprintf(format, args...)}
}

// SplitNode separates the node of a node-qualified address —
// run:<id>@<node>, branch:<run>/<branch>@<node>, room:<run>@<node> — from
// the address itself. An address without @ has node "". Only the routes
// a cluster forwards accept a node (message to=, inspect target=, logs,
// mailbox address=, watch target=, the short verbs); Parse itself refuses
// one. The node is a token like every id.
func SplitNode(s string) (addr, node string, err error) {
	v := strings.TrimSpace(s)
	i := strings.LastIndexByte(v, '@')
	if i < 0 {
		return v, "", nil
	}
	addr, node = v[:i], strings.TrimSpace(v[i+1:])
	kind, _, _ := strings.Cut(addr, ":")
	switch kind {
	case KindRun, KindBranch, KindRoom:
	default:
		return "", "", addrErr(s, "only run:, branch: and room: addresses take a node (%q); use run:<id>@<node>", s)
	}
	if !validToken(node) {
		return "", "", addrErr(s, "node name is required after @ and must be letters, digits, '.', '_' or '-': %q", s)
	}
	return addr, node, nil
}

// ParseNode parses an address that may name a node (see SplitNode).
func ParseNode(s string) (Address, string, error) {
	addr, node, err := SplitNode(s)
	if err != nil {
		return Address{}, "", err
	}
	a, err := Parse(addr)
	return a, node, err
}
