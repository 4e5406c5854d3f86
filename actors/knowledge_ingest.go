package actors

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// ingestTimeout bounds one ingest (a large tree of files takes minutes).
const ingestTimeout = 2 * time.Hour

// ingestEvery is the most often progress is reported.
const ingestEvery = 100 * time.Millisecond

func init() {
	streamOps["knowledge_ingest"] = (*Kernel).knowledgeIngest
}

// knowledgeIngest runs `knowledge ingest` as a stream: progress frames
// ({"progress":{done,total}}, at most every ingestEvery) while it works,
// then the result (or the error). A client that goes away cancels it;
// what was ingested stays (whole batches), and a second ingest resumes.
func (k *Kernel) knowledgeIngest(req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	fail := func(err error) { write(wire.Response{ID: req.ID, Error: verbs.Classify(err)}) }
	var call verbs.KnowledgeCall
	if err := json.Unmarshal(req.Params, &call); err != nil {
		fail(verbs.Invalidf("knowledge ingest: parameters must be {op, params}: %v", err))
		return
	}
	r, err := api.Decode(call.Op, call.Params)
	if err != nil {
		fail(err)
		return
	}
	if _, ok := r.(*vectorop.Ingest); !ok {
		fail(verbs.Usagef("knowledge_ingest streams ingest only (got %s)", call.Op))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ingestTimeout)
	defer cancel()
	go func() {
		select {
		case <-gone: // the client hung up: stop at the next batch
			cancel()
		case <-ctx.Done():
		}
	}()
	var (
		mu   sync.Mutex
		last time.Time
	)
	progress := func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.Sub(last) >= ingestEvery || done == total {
			last = now
			frame := map[string]any{"progress": map[string]int{"done": done, "total": total}}
			if write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(frame)}) != nil {
				cancel()
			}
		}
	}
	res, err := k.knowledgeDo(knowledge.WithProgress(ctx, progress), callerOf(req), r)
	if err != nil {
		fail(err)
		return
	}
	write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"result": res})})
}
