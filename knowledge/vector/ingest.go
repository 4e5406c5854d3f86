package vector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"golang.org/x/text/unicode/norm"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Ingest bounds.
const (
	ingestBatch   = 32      // files per write transaction
	ingestMaxFile = 1 << 20 // larger files are skipped
)

// skipDirs are directories ingest never enters (besides hidden ones).
var skipDirs = map[string]bool{"node_modules": true, "vendor": true}

// AtomMatcher lists the knowledge-graph atoms whose path patterns match
// an absolute file path (package knowledge/graph makes one).
type AtomMatcher func(ctx context.Context, abs string) ([]string, error)

// IngestRequest names what Ingest indexes.
type IngestRequest struct {
	Path string // a file or directory
	Glob string // only files whose path below Path matches; "" for all
	// Base is the directory file and package nodes are named relative
	// to (the project's root), so a file has one name whichever path it
	// was ingested through; "" or a directory Path does not lie under
	// names them relative to Path.
	Base  string
	Atoms AtomMatcher // the atoms to link code nodes to; nil links none
}

// Ingest indexes files into the code domain, ingestBatch files per
// transaction (a crash keeps every finished batch; running it again
// skips them). A file whose content hash is unchanged is skipped; a new
// file gets a file node and one node per piece (Go: per top-level
// declaration, with a package node per directory; others: chunks); a
// changed file's new nodes supersede the old ones (supersedes edges),
// except pieces whose content is unchanged, which are kept and relinked.
// Every code node is linked to the knowledge-graph atoms req.Atoms
// matches to its file.
// Hidden directories, node_modules and vendor, binary files and files
// over 1 MiB are skipped. progress (may be nil) gets files done of total
// after each batch.
func (s *Store) Ingest(ctx context.Context, req IngestRequest, progress func(done, total int)) (*vectorop.IngestResult, error) {
	start := time.Now()
	root, err := filepath.Abs(req.Path)
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", req.Path, err)
	}
	// A file has one name: through a symlinked directory (the root, the
	// cwd it is relative to) it is the file's real path, or the walk
	// found nothing below a link and a second ingest indexed it twice.
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	files, skipped, err := collectFiles(root, req.Glob)
	if err != nil {
		return nil, err
	}
	res := &vectorop.IngestResult{Path: root, Files: len(files) + skipped, Skipped: skipped, Store: s.db.Layer()}
	s.ingestMu.Lock()
	defer s.ingestMu.Unlock()
	base := req.Base
	if r, err := filepath.EvalSymlinks(base); base != "" && err == nil {
		base = r
	}
	in := &ingester{s: s, base: nameBase(root, base), res: res, atoms: req.Atoms, unusable: map[string]bool{}}
	if progress != nil {
		progress(0, len(files))
	}
	for i := 0; i < len(files); i += ingestBatch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := in.batch(ctx, files[i:min(i+ingestBatch, len(files))]); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", root, err)
		}
		if progress != nil {
			progress(min(i+ingestBatch, len(files)), len(files))
		}
	}
	if err := in.retireGone(ctx, root, req.Glob); err != nil {
		return nil, fmt.Errorf("ingest %s: %w", root, err)
	}
	if err := s.syncIfLoaded(ctx); err != nil {
		return nil, err
	}
	res.DurationMS = time.Since(start).Milliseconds()
	return res, nil
}

// retireGone retires the live file nodes under the directory root whose
// path below root matches glob and whose file no longer exists (or is no
// longer a text file ingest reads: binary, over 1 MiB, not regular), with
// their declarations and chunks, ingestBatch files per transaction:
// each is superseded by itself (supersededBy is its own id: deleted, no
// newer version), so it is no longer live code and ranks as superseded
// nodes do. Files outside root or not matching glob are left alone.
func (in *ingester) retireGone(ctx context.Context, root, glob string) error {
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		// A file ingested by itself exists (collectFiles checked); it is
		// retired if it is no longer text.
		if !in.usable(root) {
			_, err := in.s.writeGraph(ctx, func(tx *vtx) (any, error) { return nil, in.retireFile(ctx, tx, root) })
			return err
		}
		return nil
	}
	prefix := "file:" + strings.TrimSuffix(root, "/") + "/"
	rows, err := in.s.r.QueryContext(ctx, `SELECT key FROM vg_nodes WHERE key >= ? AND key < ? AND superseded_by IS NULL`,
		prefix, prefix[:len(prefix)-1]+"0")
	if err != nil {
		return fmt.Errorf("read file nodes: %w", err)
	}
	var gone []string
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			rows.Close()
			return fmt.Errorf("read file nodes: %w", err)
		}
		abs := strings.TrimPrefix(key, "file:")
		rel, err := filepath.Rel(root, abs)
		if err != nil || (glob != "" && !doublestar.MatchUnvalidated(glob, filepath.ToSlash(rel))) {
			continue
		}
		if !in.usable(abs) {
			gone = append(gone, abs)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read file nodes: %w", err)
	}
	for i := 0; i < len(gone); i += ingestBatch {
		_, err := in.s.writeGraph(ctx, func(tx *vtx) (any, error) {
			for _, abs := range gone[i:min(i+ingestBatch, len(gone))] {
				if err := in.retireFile(ctx, tx, abs); err != nil {
					return nil, err
				}
			}
			return nil, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// retireFile retires a deleted file's live nodes (see retireGone); a
// file another process re-ingested or retired meanwhile is left alone.
func (in *ingester) retireFile(ctx context.Context, tx *vtx, abs string) error {
	id, _, err := liveByKey(ctx, tx, "file:"+abs)
	if err != nil || id == "" {
		return err
	}
	if in.usable(abs) {
		return nil // back again
	}
	now := store.Now()
	if err := tx.retire(ctx, id, id, now); err != nil {
		return err
	}
	pieces, err := oldPieces(ctx, tx, abs)
	if err != nil {
		return err
	}
	for _, o := range pieces {
		if err := tx.retire(ctx, o.id, o.id, now); err != nil {
			return err
		}
	}
	in.res.Removed++
	in.res.Superseded += 1 + len(pieces)
	return nil
}

// nameBase is what the nodes of files under root are named relative
// to: base when root lies under it, else root itself.
func nameBase(root, base string) string {
	if base != "" {
		if rel, err := filepath.Rel(base, root); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return base
		}
	}
	return root
}

// readRegular reads a regular file of at most max bytes: one that became
// something else (a FIFO, a device) since it was listed, or grew past
// max, is refused without blocking or reading it all.
func readRegular(path string, max int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return data, err
}

// collectFiles lists the regular files under root (or root itself) that
// match glob, sorted; skipped counts those over the size limit.
func collectFiles(root, glob string) ([]string, int, error) {
	fi, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, op.NotFound("path", "path", root)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("ingest %s: %w", root, err)
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			// A FIFO or a device: opening one blocked the store's ingests,
			// reading /dev/zero grew the kernel without bound.
			return nil, 0, op.Invalid("path", "path %s is not a regular file or a directory (%s): ingest reads files", root, fi.Mode().Type())
		}
		if fi.Size() > ingestMaxFile {
			return nil, 1, nil
		}
		return []string{root}, 0, nil
	}
	var files []string
	skipped := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			skipped++
			return nil
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || skipDirs[name]) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if glob != "" && !doublestar.MatchUnvalidated(glob, filepath.ToSlash(rel)) {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > ingestMaxFile {
			skipped++
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("ingest %s: %w", root, err)
	}
	slices.Sort(files)
	return files, skipped, nil
}

// ingester is one Ingest call's state.
type ingester struct {
	s     *Store
	base  string // what node names are relative to
	res   *vectorop.IngestResult
	atoms func(ctx context.Context, abs string) ([]string, error) // atoms whose patterns match a file
	// unusable are indexed files this ingest found binary or unreadable:
	// retired with the deleted ones.
	unusable map[string]bool
}

// usable reports whether the indexed file abs is still one ingest reads:
// there, a regular file of at most ingestMaxFile bytes, not found binary.
func (in *ingester) usable(abs string) bool {
	fi, err := os.Lstat(abs)
	return err == nil && fi.Mode().IsRegular() && fi.Size() <= ingestMaxFile && !in.unusable[abs]
}

// fileWork is one changed or new file of a batch.
type fileWork struct {
	abs    string
	oldID  string
	file   *nodeIn
	pieces []*nodeIn
	recv   map[*nodeIn]string // method → receiver type name
	old    map[string]oldPiece
	pkg    *nodeIn
}

type oldPiece struct{ id, hash string }

// textual reports whether data looks like text: no NUL byte and valid
// UTF-8 in its first 8 KiB.
func textual(data []byte) bool {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if len(data) > len(head) {
		for i := 0; i < 3 && len(head) > 0 && !utf8.Valid(head); i++ {
			head = head[:len(head)-1] // a rune cut at the boundary
		}
	}
	return utf8.Valid(head)
}

func (in *ingester) batch(ctx context.Context, files []string) error {
	var work []*fileWork
	var fresh []*nodeIn
	for _, abs := range files {
		w, err := in.prepare(ctx, abs)
		if err != nil {
			return err
		}
		if w == nil {
			continue
		}
		work = append(work, w)
		fresh = append(fresh, w.file)
		if w.pkg != nil {
			fresh = append(fresh, w.pkg)
		}
		for _, p := range w.pieces {
			if o, ok := w.old[p.key]; !ok || o.hash != p.hash {
				fresh = append(fresh, p)
			}
		}
	}
	if len(work) == 0 {
		return nil
	}
	in.s.embedNodes(fresh)
	_, err := in.s.writeGraph(ctx, func(tx *vtx) (any, error) {
		for _, w := range work {
			if err := in.write(ctx, tx, w); err != nil {
				return nil, err
			}
		}
		return nil, nil
	})
	return err
}

// prepare reads a file and, unless it is unchanged or not text, splits
// it into nodes.
func (in *ingester) prepare(ctx context.Context, abs string) (*fileWork, error) {
	data, err := readRegular(abs, ingestMaxFile)
	if err != nil || !textual(data) {
		in.res.Skipped++
		if id, _, err := liveByKey(ctx, in.s.r, "file:"+abs); err == nil && id != "" {
			in.unusable[abs] = true // its text is no longer what the nodes say
		}
		return nil, nil
	}
	hash := hashOf(string(data))
	oldID, oldHash, err := liveByKey(ctx, in.s.r, "file:"+abs)
	if err != nil {
		return nil, err
	}
	if oldID != "" && oldHash == hash {
		in.res.Unchanged++
		return nil, nil
	}
	rel, _ := filepath.Rel(in.base, abs)
	if rel == "." {
		rel = filepath.Base(abs)
	}
	// Names and text are kept composed (NFC), as queries are; the hash
	// stays the file's own, and lines are the same in either form.
	rel = norm.NFC.String(filepath.ToSlash(rel))
	if !norm.NFC.IsNormal(data) {
		data = norm.NFC.Bytes(data)
	}
	summary, ps := splitFile(abs, rel, data)
	w := &fileWork{abs: abs, oldID: oldID, recv: map[*nodeIn]string{}}
	w.file = &nodeIn{key: "file:" + abs, domain: vectorop.DomainCode, typ: "file", name: rel, path: abs, lineStart: 1,
		lineEnd: bytes.Count(data, []byte("\n")) + 1, content: summary, hash: hash, trust: vectorop.TrustCode, verified: true,
		source: vectorop.SourceCode, ref: abs}
	for _, p := range ps {
		n := &nodeIn{key: p.key, domain: vectorop.DomainCode, typ: p.typ, name: p.name, path: abs, lineStart: p.lineStart,
			lineEnd: p.lineEnd, content: p.content, trust: vectorop.TrustCode, verified: true, source: vectorop.SourceCode,
			ref: fmt.Sprintf("%s:%d-%d", abs, p.lineStart, p.lineEnd)}
		n.hash = hashOf(n.content)
		if p.recv != "" {
			w.recv[n] = p.recv
		}
		w.pieces = append(w.pieces, n)
	}
	if strings.HasSuffix(abs, ".go") && len(ps) > 0 && strings.HasPrefix(summary, "package ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(summary, "package "), " ")
		relDir, _ := filepath.Rel(in.base, filepath.Dir(abs))
		w.pkg = packageOf(filepath.Dir(abs), relDir, name)
	}
	if oldID != "" {
		if w.old, err = oldPieces(ctx, in.s.r, abs); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// oldPieces returns the live declaration and chunk nodes of a file.
func oldPieces(ctx context.Context, q store.Querier, abs string) (map[string]oldPiece, error) {
	out := map[string]oldPiece{}
	for _, prefix := range []string{"decl:" + abs + "#", "chunk:" + abs + "#"} {
		rows, err := q.QueryContext(ctx, `SELECT key, id, content_hash FROM vg_nodes
			WHERE key >= ? AND key < ? AND superseded_by IS NULL`, prefix, prefix[:len(prefix)-1]+"$")
		if err != nil {
			return nil, fmt.Errorf("read nodes of %s: %w", abs, err)
		}
		for rows.Next() {
			var k string
			var o oldPiece
			if err := rows.Scan(&k, &o.id, &o.hash); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read nodes of %s: %w", abs, err)
			}
			out[k] = o
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read nodes of %s: %w", abs, err)
		}
	}
	return out, nil
}

// retire marks old as superseded by newID before newID is inserted (the
// live-key index allows one live node per key; the reference is checked
// at commit).
func (tx *vtx) retire(ctx context.Context, old, newID, now string) error {
	_, err := tx.ExecContext(ctx, `UPDATE vg_nodes SET superseded_by = ?, updated_at = ? WHERE id = ? AND superseded_by IS NULL`, newID, now, old)
	if err != nil {
		return fmt.Errorf("supersede node %s: %w", old, err)
	}
	return nil
}

// replace inserts n, superseding the live node old (if any).
func (tx *vtx) replace(ctx context.Context, n *nodeIn, old, now string) error {
	n.id = store.NewID()
	if old != "" {
		if err := tx.retire(ctx, old, n.id, now); err != nil {
			return err
		}
	}
	if err := tx.insertNode(ctx, n, now); err != nil {
		return err
	}
	if old != "" {
		return tx.addEdge(ctx, n.id, "supersedes", old, now)
	}
	return nil
}
