package runs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// stagingInfix marks a state directory being made: <parent>/.<name>.new-<n>
// holds a new run's first files until run.json is written and the
// directory is renamed to <parent>/<name> (see Start).
const stagingInfix = ".new-"

// pruningInfix marks a state directory being deleted (Prune):
// <parent>/.<name>.pruning-<n>.
const pruningInfix = ".pruning-"

// archivingInfix marks the tombstone directory of an archive being made
// (Archive): <parent>/.<name>.archiving-<n>.
const archivingInfix = ".archiving-"

// publish writes run.json (data) into the staging directory stage, fsyncs
// it — the run's record, which a crash of the machine must not lose; on
// Linux file systems that also makes its name in stage durable — and
// renames stage to dir. The new entry in dir's parent is made durable by
// an fsync of the parent, now or, with dirs, once for the batch.
func publish(stage string, dir Dir, data []byte, dirs *fsutil.DirSyncs) error {
	if err := stageRecord(stage, data); err != nil {
		return err
	}
	return commitStage(stage, dir, dirs)
}

// stageRecord is publish's first step: run.json written into stage and
// fsynced.
func stageRecord(stage string, data []byte) error {
	return fsutil.CreateFile(filepath.Join(stage, RunFile), data, 0o600, true)
}

// commitStage is publish's second step: stage renamed to dir, the new
// entry made durable (now, or with dirs once for the batch).
func commitStage(stage string, dir Dir, dirs *fsutil.DirSyncs) error {
	if err := os.Rename(stage, string(dir)); err != nil {
		return fmt.Errorf("publish state dir: %w", err)
	}
	parent := filepath.Dir(string(dir))
	if dirs != nil {
		dirs.Add(parent)
		return nil
	}
	return fsutil.SyncDir(parent)
}

// writeRecord writes run.json of a run that could not be started: into a
// new state directory made whole (staged, then renamed), or over the
// previous run's run.json.
func writeRecord(dir Dir, meta *Meta, fresh bool, dirs *fsutil.DirSyncs) error {
	data, err := fsutil.MarshalIndent(meta)
	if err != nil {
		return err
	}
	if !fresh || dir.Exists(RunFile) {
		return fsutil.WriteFile(dir.Path(RunFile), data, 0o600)
	}
	stage, err := os.MkdirTemp(filepath.Dir(string(dir)), "."+filepath.Base(string(dir))+stagingInfix)
	if err != nil {
		return err
	}
	if err := publish(stage, dir, data, dirs); err != nil {
		os.RemoveAll(stage)
		return err
	}
	return nil
}

// CleanStaging removes the staging directories (see Start) in the runs
// root of agentDir that are older than minAge: what a kernel that died
// while it started runs left behind (its supervisors, never handed their
// run, have exited) — and what a prune could not finish deleting. It
// returns how many it removed.
func CleanStaging(agentDir string, minAge time.Duration) int {
	root := Root(agentDir)
	ents, err := os.ReadDir(root)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		archiving := strings.Contains(e.Name(), archivingInfix)
		if !e.IsDir() || !strings.HasPrefix(e.Name(), ".") || !strings.Contains(e.Name(), stagingInfix) && !strings.Contains(e.Name(), pruningInfix) && !archiving {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < minAge {
			continue
		}
		if archiving && placeTombstone(filepath.Join(root, e.Name())) {
			n++
			continue
		}
		if fsutil.RemoveTree(filepath.Join(root, e.Name())) == nil {
			n++
		}
	}
	return n
}
