package runs

// Idle is how many started supervisors wait in the pool, ready to be
// handed a run (tests wait for it: a process can be listed in /proc
// before the pool has it).
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}
