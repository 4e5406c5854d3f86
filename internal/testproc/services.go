package testproc

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// ServiceUsage lists the helpers that behave like services (probes,
// liveness, max_rss, watch tests).
const ServiceUsage = `service helpers:
  serve-http DELAY PORT [PIDFILE]  wait DELAY (a Go duration), then answer every
                           HTTP request on 127.0.0.1:PORT with 200; prints
                           "listening <port> <unix_ms>" once it listens
  listen-tcp DELAY PORT [PIDFILE]  the same with a bare TCP listener (no answer)
  say-after DELAY TEXT [PIDFILE]   wait DELAY, print TEXT, sleep forever
  touch-after DELAY FILE [PIDFILE] wait DELAY, create FILE, sleep forever
  exists FILE              exit 0 when FILE exists, else 1
  alloc MIB [PIDFILE [STARTS]]  append "start PID" to STARTS, then allocate and
                           touch MIB MiB, print "allocated", sleep
  count-starts FILE [PIDFILE]  append a line to FILE, print "start <n>", sleep
  http-get PORT            GET / from 127.0.0.1:PORT: exit 0 on a 2xx answer, else 1
  busy-loop [PIDFILE]      spin on the CPU for ever (its CPU time grows while it runs)`

// runService runs a service helper; ok is false for another name.
func runService(name string, args []string) (code int, ok bool) {
	switch name {
	case "serve-http", "listen-tcp":
		return serve(name == "serve-http", args), true
	case "say-after":
		writePid(arg(args, 2, ""), os.Getpid())
		time.Sleep(duration(arg(args, 0, "0s")))
		fmt.Println(arg(args, 1, "ready"))
		sleepForever()
	case "touch-after":
		writePid(arg(args, 2, ""), os.Getpid())
		time.Sleep(duration(arg(args, 0, "0s")))
		if err := os.WriteFile(arg(args, 1, ""), []byte("ok\n"), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1, true
		}
		sleepForever()
	case "exists":
		if _, err := os.Stat(arg(args, 0, "")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1, true
		}
		return 0, true
	case "alloc":
		n, _ := strconv.Atoi(arg(args, 0, "64"))
		writePid(arg(args, 1, ""), os.Getpid())
		if starts := arg(args, 2, ""); starts != "" {
			if err := appendLine(starts, fmt.Sprint("start ", os.Getpid())); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1, true
			}
		}
		mem := make([]byte, n<<20)
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1 // touched: resident, not only reserved
		}
		fmt.Println("allocated", n)
		for {
			time.Sleep(time.Hour)
			mem[0]++ // keep it alive
		}
	case "http-get":
		return httpGet(arg(args, 0, "0")), true
	case "busy-loop":
		writePid(arg(args, 0, ""), os.Getpid())
		for n := 0; ; n++ {
			if n < 0 {
				fmt.Println(n) // never: keeps the loop from being optimised away
			}
		}
	case "count-starts":
		file := arg(args, 0, "")
		writePid(arg(args, 1, ""), os.Getpid())
		if err := appendLine(file, fmt.Sprint("start ", os.Getpid())); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1, true
		}
		data, _ := os.ReadFile(file)
		fmt.Println("start", strings.Count(string(data), "\n"))
		sleepForever()
	}
	return 0, false
}

// serve listens on 127.0.0.1:PORT after DELAY; with answer, every
// connection gets one HTTP 200 answer.
func serve(answer bool, args []string) int {
	writePid(arg(args, 2, ""), os.Getpid())
	time.Sleep(duration(arg(args, 0, "0s")))
	l, err := net.Listen("tcp", "127.0.0.1:"+arg(args, 1, "0"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("listening %s %d\n", arg(args, 1, "0"), time.Now().UnixMilli())
	for {
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		if !answer {
			go func() {
				time.Sleep(time.Second)
				c.Close()
			}()
			continue
		}
		go func() {
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil || strings.TrimSpace(line) == "" {
					break
				}
			}
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
		}()
	}
}

// httpGet sends one GET / to 127.0.0.1:port: 0 when the answer is 2xx.
func httpGet(port string) int {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 2") {
		fmt.Fprintf(os.Stderr, "answer %q: %v\n", line, err)
		return 1
	}
	return 0
}

func duration(s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0
	}
	return d
}

// appendLine appends one line to file.
func appendLine(file, line string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(f, line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
