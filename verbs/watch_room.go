package verbs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// IsRoom reports whether the watch is of a room's timeline.
func (w *Watch) IsRoom() bool { return w.Target != "" && w.Target != "coordinator" }

// validateRoom checks a room target and since.
func (w *Watch) validateRoom() error {
	a, node, err := mailbox.ParseNode(w.Target)
	if err != nil {
		return &Error{Exit: ExitDataErr, Code: "invalid_address", Message: err.Error(), Hint: "watch target=room:<run> (or no target: your session's follow-ups)"}
	}
	if a.Kind != mailbox.KindRoom {
		return Usagef("watch target=%s is not available: watch streams your session's follow-ups (target=coordinator) or a room's timeline (target=room:<run>)", w.Target)
	}
	w.Target = a.String()
	if node != "" {
		w.Target += "@" + node // the kernel routes it
	}
	if w.Since != "" {
		if _, err := time.Parse(time.RFC3339Nano, w.Since); err != nil {
			return Invalidf("watch since must be an RFC 3339 time such as an entry's received_at (got %q)", w.Since)
		}
	}
	return nil
}

// WatchRoom streams a room's timeline until ctx ends or the kernel goes
// away, calling emit with each entry (JSON: the envelope and its
// received_at) in order, each once. With w.Since set it first replays
// what was received after it. A {"missed":true,…} object is emitted when
// a compaction dropped entries after since.
//
// An entry carrying more than the views show of a message is bounded as
// they bound it (boundRecord): its large values cut, with where the whole
// is — the room's messages.jsonl and the entry id.
func WatchRoom(ctx context.Context, env *Env, w *Watch, emit func(json.RawMessage) error) error {
	timeline := watchedTimeline(env, w.Target)
	err := env.stream(ctx, "watch_room", "", w, func(resp *wire.Response) (bool, error) {
		return false, emit(boundRoomEntry(resp.Result, timeline))
	})
	if a, node, perr := mailbox.ParseNode(w.Target); perr == nil && node != "" {
		// Another node's answer names its run without the node (and its
		// hint lists that node's runs): as logs, kill and mailbox say it.
		return qualifyErr(err, a.ID, node)
	}
	return err
}

// watchedTimeline is the timeline file of a watched room of this node
// ("" for another node's, or a run this caller cannot see: the kernel
// answers that).
func watchedTimeline(env *Env, target string) string {
	a, node, err := mailbox.ParseNode(target)
	if err != nil || node != "" || a.Kind != mailbox.KindRoom {
		return ""
	}
	in, err := loadInspectRun(env, a.ID)
	if err != nil {
		return ""
	}
	return rooms.TimelinePath(string(in.FilesDir()))
}

// boundRoomEntry bounds one streamed timeline entry.
func boundRoomEntry(raw json.RawMessage, timeline string) json.RawMessage {
	if len(raw) <= viewValueBytes {
		return raw
	}
	var e struct {
		ID string `json:"id"`
	}
	json.Unmarshal(raw, &e)
	if out, cut := boundObject(raw, cutWhere{File: timeline, ID: e.ID}, nil); cut {
		return out
	}
	return raw
}
