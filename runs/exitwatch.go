package runs

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ExitWatcher reports when processes exit — children or not — using one
// epoll set of pidfds, so a kernel watching hundreds of supervisors needs
// one thread, and an exit is seen at once. Where pidfds are unavailable it
// polls every 250 ms.
type ExitWatcher struct {
	epfd  int
	wake  int // eventfd: Close rings it so the loop exits before epfd closes
	mu    sync.Mutex
	byFD  map[int32]func()
	poll  map[int]pollEntry
	close chan struct{}
}

type pollEntry struct {
	start  uint64
	onExit func()
}

// NewExitWatcher starts a watcher.
func NewExitWatcher() (*ExitWatcher, error) {
	w := &ExitWatcher{epfd: -1, byFD: map[int32]func(){}, poll: map[int]pollEntry{}, close: make(chan struct{})}
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	w.epfd = fd
	if w.wake, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, w.wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(w.wake)}); err != nil {
		unix.Close(w.wake)
		unix.Close(fd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	go w.loop()
	go w.pollLoop()
	return w, nil
}

// Watch calls onExit (once, from the watcher's goroutine) when the process
// pid that started at start exits. A pid that is already gone, or whose
// start time differs (reused), is reported at once.
func (w *ExitWatcher) Watch(pid int, start uint64, onExit func()) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, syscall.ESRCH) {
			go onExit()
			return
		}
		w.mu.Lock()
		w.poll[pid] = pollEntry{start: start, onExit: onExit}
		w.mu.Unlock()
		return
	}
	// The pidfd pins the process that had pid when it was opened: check it
	// is still the one we mean.
	if !Alive(pid, start) {
		unix.Close(fd)
		go onExit()
		return
	}
	w.mu.Lock()
	if w.byFD == nil { // closed
		w.mu.Unlock()
		unix.Close(fd)
		return
	}
	w.byFD[int32(fd)] = onExit
	w.mu.Unlock()
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		w.mu.Lock()
		delete(w.byFD, int32(fd))
		w.poll[pid] = pollEntry{start: start, onExit: onExit}
		w.mu.Unlock()
		unix.Close(fd)
	}
}

// loop owns epfd: it closes it (and the eventfd) when Close rings, so an
// fd number is never closed under a blocked epoll_wait and reused by
// another watcher.
func (w *ExitWatcher) loop() {
	defer unix.Close(w.epfd)
	defer unix.Close(w.wake)
	events := make([]unix.EpollEvent, 64)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err != nil {
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			if ev.Fd == int32(w.wake) {
				w.mu.Lock()
				for fd := range w.byFD {
					unix.Close(int(fd))
				}
				w.byFD = nil
				w.mu.Unlock()
				return
			}
			w.mu.Lock()
			cb := w.byFD[ev.Fd]
			delete(w.byFD, ev.Fd)
			w.mu.Unlock()
			unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, int(ev.Fd), nil)
			unix.Close(int(ev.Fd))
			if cb != nil {
				cb()
			}
		}
	}
}

func (w *ExitWatcher) pollLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-w.close:
			return
		case <-t.C:
		}
		w.mu.Lock()
		var gone []func()
		for pid, e := range w.poll {
			if !Alive(pid, e.start) {
				gone = append(gone, e.onExit)
				delete(w.poll, pid)
			}
		}
		w.mu.Unlock()
		for _, cb := range gone {
			cb()
		}
	}
}

// Close stops the watcher; pending callbacks are not called.
func (w *ExitWatcher) Close() {
	close(w.close)
	var one [8]byte
	one[0] = 1
	unix.Write(w.wake, one[:])
}
