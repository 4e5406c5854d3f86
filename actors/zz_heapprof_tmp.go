package actors

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
)

func init() {
	p := os.Getenv("PI_ACTORS_HEAPPROF")
	if p == "" {
		return
	}
	runtime.MemProfileRate = 512 * 1024
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR2)
	go func() {
		n := 0
		for range ch {
			runtime.GC()
			f, _ := os.Create(p + "." + string(rune('0'+n)))
			pprof.Lookup("heap").WriteTo(f, 0)
			f.Close()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m, _ := os.Create(p + ".ms" + string(rune('0'+n)))
			fmt.Fprintf(m, "HeapInuse=%d HeapAlloc=%d HeapSys=%d HeapIdle=%d HeapReleased=%d StackInuse=%d MSpanInuse=%d GCSys=%d OtherSys=%d Sys=%d NumGC=%d\n", ms.HeapInuse, ms.HeapAlloc, ms.HeapSys, ms.HeapIdle, ms.HeapReleased, ms.StackInuse, ms.MSpanInuse, ms.GCSys, ms.OtherSys, ms.Sys, ms.NumGC)
			m.Close()
			n++
		}
	}()
}
