package main

import (
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/verbs"
)

// FuzzParseArgs feeds the CLI's parameter parsing (key=value, key:=JSON,
// words, flags, a stdin object or batch) and the verb layer's decoding and
// validation with arbitrary input: no panic, and every rejection is a
// usage or data error (64 or 65), never an internal one.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []struct{ args, stdin string }{
		{"spawn\x00as=run:x\x00template=echo hi", ""},
		{"spawn\x00-", `[{"as":"run:a","template":"true"},{"as":"run:b","template":"true"}]`},
		{"message\x00to=run:x\x00type=task.assign\x00body:={\"n\":1}", ""},
		{"message\x00-", "{\"to\":\"run:x\",\"type\":\"a.b\"}\n{\"to\":\"room:x\",\"type\":\"a.b\"}\n"},
		{"inspect\x00target=run:x\x00view=tail\x00lines=5\x00--json", ""},
		{"exec\x00echo {x}\x00x:=[1,2]\x00--dry-run", ""},
		{"call\x00utility-git-log\x00count:=5", ""},
		{"register_tool\x00name=t\x00template:=null", ""},
		{"mailbox\x00done\x00id=1\x00status=handled", ""},
		{"kernel\x00status", ""},
		{"inspect\x00-", "{not json"},
		{"message\x00a:=\x00b:={", ""},
		{"spawn\x00values:=\"x\"\x00ttl_ms=abc", ""},
	} {
		f.Add(seed.args, seed.stdin)
	}
	f.Fuzz(func(t *testing.T, args, stdin string) {
		words := strings.Split(args, "\x00")
		spec := verbs.Find(words[0])
		if spec == nil {
			return
		}
		r, err := parseArgs(words, strings.NewReader(stdin), specFlags(spec), spec.Word)
		if err != nil {
			checkRejection(t, err)
			return
		}
		env := &verbs.Env{}
		for _, item := range r.single() {
			if _, err := decode(spec, item, env); err != nil {
				checkRejection(t, err)
			}
		}
	})
}

func checkRejection(t *testing.T, err error) {
	t.Helper()
	if e := verbs.Classify(err); e.Exit != verbs.ExitUsage && e.Exit != verbs.ExitDataErr {
		t.Fatalf("rejection is not a usage or data error: exit %d code %s: %v", e.Exit, e.Code, err)
	}
}
