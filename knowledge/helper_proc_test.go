package knowledge

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/pi-actors/pi-actors/knowledge/api"
)

// helperMain runs a helper process (see TestMain):
//
//	update DB ATOM VERSION   update the atom once with the version; print
//	                         "ok" or the error code
//	burst DB PROJECT         create atoms forever, printing each id after
//	                         its commit
func helperMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: update DB ATOM VERSION | burst DB PROJECT")
		return 2
	}
	s, err := Open(args[1], Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer s.Close()
	ctx, c := context.Background(), Caller{RunID: "helper"}
	switch args[0] {
	case "update":
		v, _ := strconv.Atoi(args[3])
		k := fmt.Sprintf("from pid %d", os.Getpid())
		req := &api.ManageGraph{Operation: "update", EntityType: "atom", ID: args[2], Version: &v, Knowledge: &k}
		if e := req.Validate(); e != nil {
			fmt.Println(e.Code)
			return 0
		}
		fmt.Fprintln(os.Stdout, "ready")
		// Wait for the go signal so both processes race.
		var line string
		fmt.Fscanln(os.Stdin, &line)
		_, err := s.ManageGraph(ctx, c, req)
		if ae, ok := api.AsError(err); ok {
			b, _ := json.Marshal(ae)
			fmt.Println(string(b))
			return 0
		}
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("ok")
	case "burst":
		for i := 0; ; i++ {
			name := fmt.Sprintf("burst %d", i)
			req := &api.ManageGraph{Operation: "create", EntityType: "atom", ProjectID: args[2], Name: &name,
				Paths: api.Patterns{fmt.Sprintf("burst/%d/**", i)}}
			a, err := s.ManageGraph(ctx, c, req)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Println(a.(*api.Atom).ID)
		}
	}
	return 0
}
