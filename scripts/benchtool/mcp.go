package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpBench measures the MCP server through the SDK's client over stdio:
// server start → initialize answered (n fresh servers, the 2025-06-18
// handshake), and the tools/call inspect round trip on a warm server (calls
// sequential calls), beside the same inspect through the CLI (one process
// per call). It prints key=value lines.
func mcpBench(pa string, n, calls int) {
	ctx := context.Background()
	var starts []float64
	for i := 0; i < n; i++ {
		t0 := time.Now()
		s := mcpConnect(ctx, pa)
		starts = append(starts, msOf(time.Since(t0)))
		s.Close()
	}
	s := mcpConnect(ctx, pa)
	defer s.Close()
	args := map[string]any{"target": "session:all", "view": "runs"}
	for i := 0; i < 20; i++ { // warm-up
		mcpCall(ctx, s, args)
	}
	var rt []float64
	for i := 0; i < calls; i++ {
		t0 := time.Now()
		mcpCall(ctx, s, args)
		rt = append(rt, msOf(time.Since(t0)))
	}
	var cli []float64
	for i := 0; i < min(calls, 50); i++ {
		t0 := time.Now()
		if out, err := exec.Command(pa, "inspect", "target=session:all", "view=runs", "--json").CombinedOutput(); err != nil {
			fatalf("pi-actors inspect: %v\n%s", err, out)
		}
		cli = append(cli, msOf(time.Since(t0)))
	}
	fmt.Printf("start_median_ms=%.2f\nstart_p95_ms=%.2f\n", pct(starts, 50), pct(starts, 95))
	fmt.Printf("call_median_ms=%.3f\ncall_p95_ms=%.3f\ncall_p99_ms=%.3f\n", pct(rt, 50), pct(rt, 95), pct(rt, 99))
	fmt.Printf("cli_median_ms=%.2f\n", pct(cli, 50))
}

func mcpConnect(ctx context.Context, pa string) *mcp.ClientSession {
	cl := mcp.NewClient(&mcp.Implementation{Name: "benchtool", Version: "1"}, nil)
	cmd := exec.Command(pa, "mcp")
	cmd.Stderr = os.Stderr
	s, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		fatalf("mcp connect: %v", err)
	}
	return s
}

func mcpCall(ctx context.Context, s *mcp.ClientSession, args map[string]any) {
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "inspect", Arguments: args})
	if err != nil || res.IsError {
		fatalf("tools/call inspect: %v %v", err, res)
	}
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// pct is the p-th percentile (nearest rank) of xs.
func pct(xs []float64, p int) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}
