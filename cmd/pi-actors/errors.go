package main

import (
	"github.com/pi-actors/pi-actors/verbs"
)

// Exit codes (sysexits for pi-actors' own errors; exec/call pass the
// command's own status through).
const (
	exitOK          = verbs.ExitOK
	exitUsage       = verbs.ExitUsage
	exitUnavailable = verbs.ExitUnavailable
	exitSoftware    = verbs.ExitSoftware
	exitCantCreate  = 73
)

// cliError is an error with its exit code and machine code decided.
type cliError = verbs.Error

func usagef(format string, args ...any) *cliError { return verbs.Usagef(format, args...) }
