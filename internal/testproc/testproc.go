// Package testproc holds the named helper processes tests start instead of
// mocks: real processes that ignore SIGTERM, fork grandchildren, exit with
// a given status or echo their stdin. A test binary dispatches to Main from
// TestMain (see the go toolchain's "helper process" pattern), so the
// helpers run as real children of the code under test.
//
// Every helper that stays alive writes its pid to a file first, so a test
// can prove it is gone afterwards and kill it if it is not.
package testproc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// EnvVar selects a helper in a test binary: when set, TestMain calls Main
// instead of running tests.
const EnvVar = "PI_ACTORS_TEST_HELPER"

// Usage lists the helpers.
const Usage = `helpers:
  exit N                   exit with status N
  echo-stdin               copy stdin to stdout
  stderr MSG [N]           print MSG to stderr, exit N (default 1)
  ignore-term PIDFILE      ignore SIGTERM, write pid, print "ready", sleep forever
  trap-term PIDFILE FILE   write pid, sleep until SIGTERM, then append
                           "got-term" to FILE and exit 0
  sleep-forever [PIDFILE]  write pid (optional), sleep forever
  sleep MS                 sleep MS milliseconds, then exit 0
  fork-grandchild PIDFILE [exit|first]
                           start a grandchild in the same process group,
                           write its pid (first: unless the file exists),
                           then sleep forever (or exit at once)
  kill-self SIGNAL         die from SIGNAL (a number)
  flaky FILE N             count calls in FILE; fail until the Nth call
  print-env NAME...        print NAME=value lines
  bytes N                  write N bytes of 'x' (newline every 100)
  tick INTERVAL            print "tick N" every INTERVAL (a Go duration), one write each, for ever
  hangup-socket PATH READY a dying kernel: listen on the unix socket PATH,
                           create READY, take one connection, read a line,
                           hang up without an answer, remove PATH, exit
  default-signals CMD ARG...  exec CMD with SIGINT and SIGHUP at their
                           default action, even if they were ignored here
                           (a background job of sh, nohup)`

// Main runs the helper named by args[0] and exits.
func Main(args []string) {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, Usage)
		os.Exit(2)
	}
	os.Exit(run(args[0], args[1:]))
}

func run(name string, args []string) int {
	switch name {
	case "exit":
		n, _ := strconv.Atoi(arg(args, 0, "0"))
		return n
	case "echo-stdin":
		io.Copy(os.Stdout, os.Stdin)
		return 0
	case "stderr":
		fmt.Fprintln(os.Stderr, arg(args, 0, "error"))
		n, _ := strconv.Atoi(arg(args, 1, "1"))
		return n
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		writePid(arg(args, 0, ""), os.Getpid())
		fmt.Println("ready")
		sleepForever()
	case "trap-term":
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		writePid(arg(args, 0, ""), os.Getpid())
		<-term
		f, err := os.OpenFile(arg(args, 1, ""), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(f, "got-term")
		f.Close()
		return 0
	case "tick":
		every := duration(arg(args, 0, "1ms"))
		for i := 1; ; i++ {
			fmt.Printf("tick %d\n", i)
			time.Sleep(every)
		}
	case "sleep-forever":
		writePid(arg(args, 0, ""), os.Getpid())
		sleepForever()
	case "sleep":
		ms, _ := strconv.Atoi(arg(args, 0, "0"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		return 0
	case "fork-grandchild":
		self, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// The copy of the binary dispatches by its name (testscript) or by
		// the inherited EnvVar (package tests).
		c := exec.Command(self, "sleep-forever")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if arg(args, 1, "") == "first" {
			writeFirstPid(arg(args, 0, ""), c.Process.Pid)
		} else {
			writePid(arg(args, 0, ""), c.Process.Pid)
		}
		fmt.Println("forked", c.Process.Pid)
		if arg(args, 1, "") == "exit" {
			return 0
		}
		sleepForever()
	case "kill-self":
		n, _ := strconv.Atoi(arg(args, 0, "9"))
		syscall.Kill(os.Getpid(), syscall.Signal(n))
		time.Sleep(5 * time.Second)
		return 1
	case "flaky":
		file := arg(args, 0, "")
		want, _ := strconv.Atoi(arg(args, 1, "2"))
		data, _ := os.ReadFile(file)
		n := len(strings.Fields(string(data))) + 1
		os.WriteFile(file, []byte(strings.Repeat("x\n", n)), 0o644)
		fmt.Println("attempt", n)
		if n < want {
			return 1
		}
		return 0
	case "print-env":
		for _, k := range args {
			fmt.Printf("%s=%s\n", k, os.Getenv(k))
		}
		return 0
	case "default-signals":
		// Caught signals are reset to their default action by exec;
		// ignored ones stay ignored.
		signal.Notify(make(chan os.Signal, 1), os.Interrupt, syscall.SIGHUP)
		bin, err := exec.LookPath(arg(args, 0, ""))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 127
		}
		fmt.Fprintln(os.Stderr, syscall.Exec(bin, args, os.Environ()))
		return 126
	case "hangup-socket":
		return hangupSocket(arg(args, 0, ""), arg(args, 1, ""))
	case "bytes":
		n, _ := strconv.Atoi(arg(args, 0, "0"))
		line := strings.Repeat("x", 99) + "\n"
		for n >= 100 {
			io.WriteString(os.Stdout, line)
			n -= 100
		}
		io.WriteString(os.Stdout, strings.Repeat("x", n))
		return 0
	}
	if code, ok := runService(name, args); ok {
		return code
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n%s\n%s\n", name, Usage, ServiceUsage)
	return 2
}

func arg(args []string, i int, def string) string {
	if i < len(args) {
		return args[i]
	}
	return def
}

func writePid(file string, pid int) {
	if file == "" {
		return
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)+"\n"), 0o644); err == nil {
		os.Rename(tmp, file)
	}
}

// writeFirstPid writes pid to file unless an earlier process did: the
// first of several tries (a probe that runs again) keeps its pid there.
func writeFirstPid(file string, pid int) {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(strconv.Itoa(pid) + "\n")
}

// Alive reports whether pid is a live (non-zombie) process.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
			return false
		}
	}
	return true
}

// ReadPid reads a pid file written by a helper; 0 if absent.
func ReadPid(file string) int {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// sleepForever blocks without tripping the runtime's deadlock detector
// (a bare select{} with no other goroutine is a fatal error).
func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// hangupSocket is the hangup-socket helper.
func hangupSocket(path, ready string) int {
	l, err := net.Listen("unix", path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l.(*net.UnixListener).SetUnlinkOnClose(true)
	defer l.Close()
	if err := os.WriteFile(ready, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	c, err := l.Accept()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	bufio.NewReader(c).ReadString('\n')
	c.Close()
	return 0
}
