// Package proc reads what /proc says about a process: the one place the
// runtime parses /proc/<pid>/stat (runs trusts a pid only with its start
// time; mailbox does for the process a claim belongs to).
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is what /proc/<pid>/stat says about a process.
type Stat struct {
	State string
	PPid  int
	Pgrp  int
	Sid   int
	Start uint64 // start time in clock ticks since boot
	CPU   uint64 // user + system time in clock ticks
	RSS   uint64 // resident set in pages
}

// Read reads /proc/<pid>/stat. The command name may hold spaces and
// parentheses, so fields are counted after the last ')'.
func Read(pid int) (Stat, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Stat{}, fmt.Errorf("parse /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return Stat{}, fmt.Errorf("parse /proc/%d/stat: %d fields", pid, len(f))
	}
	var st Stat
	st.State = f[0]
	st.PPid, _ = strconv.Atoi(f[1])
	st.Pgrp, _ = strconv.Atoi(f[2])
	st.Sid, _ = strconv.Atoi(f[3])
	st.Start, _ = strconv.ParseUint(f[19], 10, 64)
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	sys, _ := strconv.ParseUint(f[12], 10, 64)
	st.CPU = ut + sys
	if len(f) > 21 {
		st.RSS, _ = strconv.ParseUint(f[21], 10, 64)
	}
	return st, nil
}

// StartTime is a process's start time (clock ticks since boot), 0 when it
// does not exist or is a zombie.
func StartTime(pid int) uint64 {
	st, err := Read(pid)
	if err != nil || st.State == "Z" || st.State == "X" {
		return 0
	}
	return st.Start
}
