package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"modernc.org/sqlite" // the "sqlite" database/sql driver (no cgo)
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

// applicationID is written to every knowledge store's header (PRAGMA
// application_id): "piKG".
const applicationID = 0x70694b47

// Sentinel errors of Open.
var (
	// ErrNotStore: the file at the path is not a knowledge store (not a
	// SQLite database, or another application's database). It is left as is.
	ErrNotStore = errors.New("not a knowledge store")
	// ErrTooNew: the store's schema is newer than this binary knows. It is
	// left as is.
	ErrTooNew = errors.New("knowledge store schema is newer than this binary")
	// ErrCorrupt: SQLite reports the store damaged.
	ErrCorrupt = errors.New("knowledge store is damaged")
	// ErrForeign: the store, or the directory it is in, is another
	// user's (or others can write the directory): what it holds could be
	// read or changed by them. It is left as is.
	ErrForeign = errors.New("knowledge store is not yours alone")
)

// Options configure a DB.
type Options struct {
	// RunExists reports whether a run id exists, or why it is no run id
	// at all (the error); task ids of the form run:<id> must name one
	// (INVALID for a malformed id, NOT_FOUND for one no run has). Nil
	// accepts every run.
	RunExists func(id string) (bool, error)
	// Layer tags every item read from this store ("project" or "personal");
	// empty leaves items untagged.
	Layer string
	// ReadConns is the size of the read pool (default 4).
	ReadConns int
	// BusyTimeout is how long a write waits for another process's lock
	// (default 5 s).
	BusyTimeout time.Duration
}

// DB is one knowledge database. It is safe for concurrent use: writes go
// through one connection (serialised, BEGIN IMMEDIATE), reads through a
// pool of read-only connections.
type DB struct {
	path string
	opts Options
	w    *sql.DB
	r    *sql.DB

	smu   sync.Mutex
	stmts map[string]*sql.Stmt // prepared writer statements (see Tx)
}

// Open opens the knowledge store at path, creating it (and its directory)
// when missing, and migrates it to the current schema. A file that is not
// a knowledge store, is damaged, or has a newer schema is refused with
// ErrNotStore, ErrCorrupt or ErrTooNew and not modified.
func Open(path string, opts Options) (*DB, error) {
	if opts.ReadConns <= 0 {
		opts.ReadConns = 4
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = 5 * time.Second
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open knowledge store %s: %w", path, err)
	}
	if strings.ContainsAny(abs, "?#") {
		return nil, fmt.Errorf("open knowledge store %s: a store path may not contain ? or #", abs)
	}
	if err := checkOwner(abs); err != nil {
		return nil, fmt.Errorf("open knowledge store %s: %w", abs, err)
	}
	if err := checkHeader(abs); err != nil {
		return nil, fmt.Errorf("open knowledge store %s: %w", abs, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open knowledge store %s: %w", abs, err)
	}
	if err := ownerOnly(abs); err != nil {
		return nil, fmt.Errorf("open knowledge store %s: %w", abs, err)
	}
	s := &DB{path: abs, opts: opts, stmts: map[string]*sql.Stmt{}}
	if err := s.open(); err != nil {
		s.Close()
		return nil, fmt.Errorf("open knowledge store %s: %w", abs, classify(err))
	}
	return s, nil
}

func (s *DB) open() error {
	ms := s.opts.BusyTimeout.Milliseconds()
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)", ms)
	var err error
	if s.w, err = sql.Open("sqlite", s.path+"?"+common+"&_pragma=journal_mode(WAL)&_pragma=cache_size(-65536)&_txlock=immediate"); err != nil {
		return err
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetConnMaxIdleTime(0)
	if err := migrate(context.Background(), s.w); err != nil {
		return err
	}
	// The header (application id, user version) is written to the WAL
	// first; a checkpoint puts it in the main file, where checkHeader reads
	// it, so a process killed right after creating the store leaves one the
	// next Open accepts.
	if _, err := s.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if s.r, err = sql.Open("sqlite", s.path+"?"+common+"&_pragma=query_only(1)"); err != nil {
		return err
	}
	s.r.SetMaxOpenConns(s.opts.ReadConns)
	s.r.SetMaxIdleConns(s.opts.ReadConns)
	return nil
}

// Close closes the store's connections.
func (s *DB) Close() error {
	var errs []error
	s.smu.Lock()
	for _, st := range s.stmts {
		errs = append(errs, st.Close())
	}
	s.stmts = nil
	s.smu.Unlock()
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close knowledge store %s: %w", s.path, err)
	}
	return nil
}

// Path is the store's absolute file path.
func (s *DB) Path() string { return s.path }

// Layer is the store's layer tag (Options.Layer).
func (s *DB) Layer() string { return s.opts.Layer }

// Reader is the pool of read-only connections (query_only): reads see the
// last committed state.
func (s *DB) Reader() *sql.DB { return s.r }

// Version is the store's schema version.
func (s *DB) Version(ctx context.Context) (int, error) {
	var v int
	if err := s.r.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return 0, fmt.Errorf("schema version of %s: %w", s.path, err)
	}
	return v, nil
}

// Size is the bytes of the database file and its WAL.
func (s *DB) Size() int64 {
	var n int64
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

var sqliteMagic = []byte("SQLite format 3\x00")

// checkHeader reads the file's 100-byte SQLite header: a missing or empty
// file is a new store; otherwise it must be SQLite with our application id
// (or id 0 and no tables: a database created empty) and a schema version
// this binary knows.
// checkOwner refuses a store another user could read or change (as git
// refuses a repository another user owns): the store file or its WAL or
// shared-memory file owned by another uid, or its directory owned by
// another user (root aside) or writable by all (unless sticky). The
// project store is found by walking up from the caller's directory, so
// another user's .pi/knowledge.db above it would get the caller's notes.
func checkOwner(path string) error {
	uid := uint32(os.Geteuid())
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != uid {
			return fmt.Errorf("%w: %s belongs to uid %d (you are uid %d); use a store of your own (store=personal, or knowledge init in a directory of yours)", ErrForeign, p, st.Uid, uid)
		}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil // made by Open, 0700
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case ok && st.Uid != uid && st.Uid != 0:
		return fmt.Errorf("%w: its directory %s belongs to uid %d (you are uid %d); use a store of your own (store=personal, or knowledge init in a directory of yours)", ErrForeign, dir, st.Uid, uid)
	case fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0:
		return fmt.Errorf("%w: others can write its directory %s (mode %04o); chmod o-w %s", ErrForeign, dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// ownerOnly makes a store readable by its owner alone, whatever the
// directory (a project's .pi/ is often world-readable): a new store is
// created empty, mode 0600, before SQLite opens it — SQLite gives its WAL
// and shared-memory files the database's mode — and an existing store of
// ours, with its WAL and shared-memory files, loses group and other
// permissions.
func ownerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return err
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Getuid() {
			if err := os.Chmod(p, fi.Mode().Perm()&0o700); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkHeader(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	hdr := make([]byte, 100)
	n, err := io.ReadFull(f, hdr)
	if n == 0 && (err == io.EOF || err == nil) {
		return nil
	}
	if n < len(hdr) || !bytes.HasPrefix(hdr, sqliteMagic) {
		return fmt.Errorf("%w: the file is not a SQLite database (left untouched; move it away or choose another path)", ErrNotStore)
	}
	appID := binary.BigEndian.Uint32(hdr[68:72])
	userVersion := int(binary.BigEndian.Uint32(hdr[60:64]))
	switch {
	case appID == applicationID && userVersion > len(migrations):
		return fmt.Errorf("%w: schema version %d, this binary knows up to %d (left untouched; use a newer pi-actors)", ErrTooNew, userVersion, len(migrations))
	case appID == applicationID:
		return nil
	case appID != 0:
		return fmt.Errorf("%w: a SQLite database of another application (application_id %#x; left untouched)", ErrNotStore, appID)
	}
	return checkEmpty(path)
}

// checkEmpty accepts a SQLite database without application id only when
// it holds no schema at all.
func checkEmpty(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return fmt.Errorf("%w: %v (left untouched)", ErrNotStore, err)
	}
	// A store whose header is still only in its WAL (a writer died before
	// any checkpoint) reads as ours through SQLite.
	var appID uint32
	if n > 0 && db.QueryRow(`PRAGMA application_id`).Scan(&appID) == nil && appID == applicationID {
		return nil
	}
	if n > 0 {
		return fmt.Errorf("%w: a SQLite database with %d schema objects that is not a knowledge store (no application id; left untouched)", ErrNotStore, n)
	}
	return nil
}

// classify maps SQLite's damage reports to ErrCorrupt, a full disk
// (SQLITE_FULL) to an error matching syscall.ENOSPC, and a write that
// lost a race with another process (the lock held past the busy timeout,
// a live vector node's key written meanwhile) to op.Busy (a CONFLICT:
// run it again).
func classify(err error) error {
	if err == nil || errors.Is(err, ErrTooNew) || errors.Is(err, ErrNotStore) {
		return err
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %v (left untouched; restore a backup or move it away)", ErrCorrupt, err)
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			// Another process held the store's write lock past the busy
			// timeout; the transaction was rolled back whole.
			return fmt.Errorf("%w (%v)", op.Busy("store", "knowledge store is locked"), se)
		case sqlite3.SQLITE_CONSTRAINT:
			// At most one live node per key: another process (another
			// kernel) wrote a node with the same key since this one read
			// the store; the transaction was rolled back whole.
			if strings.Contains(se.Error(), "UNIQUE constraint failed: vg_nodes.key") {
				return fmt.Errorf("%w (%v)", op.Busy("store", "a node of the knowledge store's vector graph was written by another process"), se)
			}
		case sqlite3.SQLITE_FULL:
			// The transaction was rolled back whole; the errno lets the
			// caller say what happened (73).
			return fmt.Errorf("%w (%w; the store is unchanged)", err, syscall.ENOSPC)
		}
	}
	return err
}
