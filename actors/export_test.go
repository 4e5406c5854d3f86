package actors

import "time"

// LogKeep is logKeep for the external tests.
const LogKeep = logKeep

// SetAckWait shortens ackWait for a test; the returned func restores it.
func SetAckWait(d time.Duration) (restore func()) {
	old := ackWait
	ackWait = d
	return func() { ackWait = old }
}
