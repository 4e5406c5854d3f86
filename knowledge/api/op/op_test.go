package op

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		e    *Error
		exit int
		is   error
	}{
		{Invalid("f", "x"), 65, ErrValidation},
		{Invariant("f", "x"), 65, ErrInvariant},
		{NotFound("id", "atom", "a"), 66, ErrNotFound},
		{Conflict("atom", "a", 1, 2), 75, ErrConflict},
	} {
		var err error = c.e
		if c.e.Exit() != c.exit || !errors.Is(err, c.is) || errors.Is(err, ErrValidation) != (c.is == ErrValidation) {
			t.Fatalf("%+v: exit %d", c.e, c.e.Exit())
		}
	}
	b, _ := json.Marshal(Conflict("atom", "a", 1, 2))
	if string(b) != `{"code":"CONFLICT","message":"atom a is at version 2, not 1: read it again (query_graph operation=get) and retry with version=2","details":{"currentVersion":2,"field":"version"}}` {
		t.Fatalf("conflict JSON %s", b)
	}
}
