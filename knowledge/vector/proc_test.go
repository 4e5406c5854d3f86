package vector

import (
	"context"
	"fmt"
	"os"

	"github.com/pi-actors/pi-actors/knowledge/store"
)

// helperMain runs a helper process (see TestMain):
//
//	ingest DB DIR   ingest DIR, printing "progress DONE TOTAL" after each
//	                batch, then "done"
func helperMain(args []string) int {
	if len(args) < 3 || args[0] != "ingest" {
		fmt.Fprintln(os.Stderr, "usage: ingest DB DIR")
		return 2
	}
	db, err := store.Open(args[1], store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	s := New(db, Options{})
	defer s.Close()
	_, err = s.Ingest(context.Background(), IngestRequest{Path: args[2]}, func(done, total int) { fmt.Printf("progress %d %d\n", done, total) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	return 0
}
