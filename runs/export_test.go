package runs

import (
	"os"
	"syscall"
	"time"
)

// Idle is how many started supervisors wait in the pool, ready to be
// handed a run (tests wait for it: a process can be listed in /proc
// before the pool has it).
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// TermAtHandover makes this process, as a waiting supervisor, send itself
// SIGTERM once it has its run and before Supervise handles signals, and
// go on only when the signal was kept for it (stopAsked).
func TermAtHandover() {
	afterHandover = func() {
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		for deadline := time.Now().Add(10 * time.Second); !stopAsked.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
}
