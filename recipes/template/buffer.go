package template

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
)

// DefaultSpill is how much output a Buffer keeps in memory before it
// spills to a temporary file.
const DefaultSpill = 4 << 20

// Buffer holds one step's captured output: in memory up to a limit, then in
// a temporary file, so a large output never has to fit in memory and is
// never cut. Once written it can be read any number of times, concurrently
// (a parallel node hands the same stdin to every branch; a retry re-reads
// it). Close removes the temporary file.
type Buffer struct {
	mu    sync.Mutex
	mem   []byte
	f     *os.File
	size  int64
	dir   string
	spill int
	err   error
	limit int64 // 0 = unbounded; past it writes are counted but dropped
	lost  int64
}

// NewBuffer returns an empty buffer that spills to dir ("" = os.TempDir();
// created with its parents when the first spill needs it) past spill bytes
// (<= 0 means DefaultSpill).
func NewBuffer(dir string, spill int) *Buffer {
	if spill <= 0 {
		spill = DefaultSpill
	}
	return &Buffer{dir: dir, spill: spill}
}

// BufferOf returns a buffer holding b.
func BufferOf(b []byte) *Buffer {
	return &Buffer{mem: b, size: int64(len(b)), spill: DefaultSpill}
}

// Write appends p. Once the buffer has spilled, a write error is kept and
// returned by every later call.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	if b.limit > 0 && b.size+int64(len(p)) > b.limit {
		keep := max(0, b.limit-b.size)
		b.lost += int64(len(p)) - keep
		if keep == 0 {
			return len(p), nil
		}
		n, err := b.write(p[:keep])
		if err != nil {
			return n, err
		}
		return len(p), nil
	}
	return b.write(p)
}

// Dropped is how many bytes were dropped past the capture limit.
func (b *Buffer) Dropped() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lost
}

func (b *Buffer) write(p []byte) (int, error) {
	if b.f == nil && len(b.mem)+len(p) > b.spill {
		f, err := os.CreateTemp(b.dir, "pi-actors-output-*")
		if errors.Is(err, fs.ErrNotExist) && b.dir != "" {
			// The spill directory is made when first needed: most
			// outputs never spill.
			if err = os.MkdirAll(b.dir, 0o700); err == nil {
				f, err = os.CreateTemp(b.dir, "pi-actors-output-*")
			}
		}
		if err != nil {
			b.err = fmt.Errorf("spill output to a file: %w", err)
			return 0, b.err
		}
		if _, err := f.Write(b.mem); err != nil {
			f.Close()
			os.Remove(f.Name())
			b.err = fmt.Errorf("spill output to a file: %w", err)
			return 0, b.err
		}
		b.f, b.mem = f, nil
	}
	if b.f != nil {
		n, err := b.f.Write(p)
		b.size += int64(n)
		if err != nil {
			b.err = fmt.Errorf("write output file: %w", err)
		}
		return n, b.err
	}
	b.mem = append(b.mem, p...)
	b.size += int64(len(p))
	return len(p), nil
}

// Len is the number of bytes written.
func (b *Buffer) Len() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size
}

// Err returns the first write error, if any.
func (b *Buffer) Err() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// Reader returns an independent reader over everything written so far.
func (b *Buffer) Reader() io.Reader {
	if b == nil {
		return bytes.NewReader(nil)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil {
		return io.NewSectionReader(b.f, 0, b.size)
	}
	return bytes.NewReader(b.mem)
}

// ReadAt reads from the buffer at off (used for tails).
func (b *Buffer) ReadAt(p []byte, off int64) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f != nil {
		return b.f.ReadAt(p, off)
	}
	if off >= int64(len(b.mem)) {
		return 0, io.EOF
	}
	n := copy(p, b.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Bytes returns the whole content. Prefer Reader for large outputs.
func (b *Buffer) Bytes() ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	b.mu.Lock()
	if b.f == nil {
		defer b.mu.Unlock()
		return b.mem, nil
	}
	b.mu.Unlock()
	return io.ReadAll(b.Reader())
}

// file returns the spill file's name, or "" while the buffer is in memory.
func (b *Buffer) file() string {
	if b == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f == nil {
		return ""
	}
	return b.f.Name()
}

// Close releases the spill file.
func (b *Buffer) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.f == nil {
		return nil
	}
	name := b.f.Name()
	err := b.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	b.f = nil
	b.err = os.ErrClosed
	return err
}
