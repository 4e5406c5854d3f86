package config

import (
	"fmt"
	"strings"
	"time"
)

// Sessions is [sessions]: what happens to idle coordinator sessions.
type Sessions struct {
	// AutoSuspendAfter suspends a session with live runs that had no
	// CLI/MCP/pi activity for this long (a Go duration: "30m", "2h");
	// empty, "0" or "off" never does (the default).
	AutoSuspendAfter string `toml:"auto_suspend_after"`
}

// AutoSuspend is auto_suspend_after as a duration; 0 means off.
func (s Sessions) AutoSuspend() time.Duration {
	d, _ := s.parse()
	return d
}

func (s Sessions) parse() (time.Duration, error) {
	v := strings.TrimSpace(s.AutoSuspendAfter)
	if v == "" || v == "0" || v == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("sessions.auto_suspend_after must be a positive duration such as \"30m\" or \"2h\", or \"off\" (got %q)", s.AutoSuspendAfter)
	}
	return d, nil
}

func (s Sessions) check(path string) error {
	if _, err := s.parse(); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrInvalid, path, err)
	}
	return nil
}
