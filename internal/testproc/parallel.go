package testproc

import (
	"flag"
	"fmt"
)

// Parallel sets how many of a package's parallel tests run at once to n,
// for packages whose tests mostly wait on processes of their own
// (grace periods, timeouts, membership) and so can run more at once than
// there are CPUs. Call it from TestMain before m.Run; -parallel on the
// command line still overrides it (flags are parsed in m.Run).
func Parallel(n int) {
	if f := flag.Lookup("test.parallel"); f != nil {
		f.Value.Set(fmt.Sprint(n))
	}
}
