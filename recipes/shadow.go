package recipes

// A recipe is a tool of the MCP server and of the pi extension under its
// name. A name spelt like a pi-actors verb or like one of pi's own tools —
// compared by NameKey: case, - against _ — would stand beside the tool
// of that name, and a model (or a client resolving names spelling-blind)
// could not tell which is meant. The rule lives here, once:
//
//   - spelt like a verb: the verb wins everywhere; the MCP catalogue
//     (`pi-actors schema`) and pi leave the recipe out;
//   - spelt like a pi built-in only (Bash, read): the MCP catalogue keeps
//     it (nothing there has that name), pi leaves it out;
//   - either way the doctor reports it (kind=reserved_name) with the fix:
//     rename the recipe's file, whose name is the tool name.
//
// The pi extension applies the same rule to the catalogue it reads
// (extensions/pi/select.ts: PI_BUILTINS, nameKey).

// PiBuiltins are pi's own tool names (as pi spells them, lowercase; pi
// offers them under these names whatever a recipe is called).
var PiBuiltins = []string{"read", "bash", "edit", "write", "grep", "find", "ls"}

// What a tool name can be spelt like (Shadow.Kind).
const (
	ShadowVerb      = "verb"
	ShadowPiBuiltin = "pi_builtin"
)

// Shadow is what a tool name is spelt like: a verb or a pi built-in, and
// its name.
type Shadow struct {
	Kind string // ShadowVerb or ShadowPiBuiltin
	Name string // the verb or built-in, as it is spelt
}

// ShadowOf reports what a tool named name is spelt like (NameKey: case,
// - against _): one of verbs first — a verb wins wherever both are
// offered (ls is both) —, else one of PiBuiltins. ok is false when it is
// neither.
func ShadowOf(name string, verbs []string) (s Shadow, ok bool) {
	key := NameKey(name)
	if key == "" {
		return Shadow{}, false
	}
	for _, v := range verbs {
		if NameKey(v) == key {
			return Shadow{Kind: ShadowVerb, Name: v}, true
		}
	}
	for _, b := range PiBuiltins {
		if b == key {
			return Shadow{Kind: ShadowPiBuiltin, Name: b}, true
		}
	}
	return Shadow{}, false
}

// SpeltLikeVerb reports whether a tool named name is spelt like one of
// verbs: the MCP catalogue leaves such a recipe out.
func SpeltLikeVerb(name string, verbs []string) bool {
	s, ok := ShadowOf(name, verbs)
	return ok && s.Kind == ShadowVerb
}
