package recipes

import "github.com/pi-actors/pi-actors/recipes/template"

// ContextHook returns the Runner hook that appends the actor_context bundle
// to the prompt of every `pi -p`/`pi --print` leaf (template.ContextHook).
// It returns nil when the recipe turned the bundle off.
func (res *Resolved) ContextHook() func(*template.Step, []string) []string {
	if !res.Recipe.ActorContext {
		return nil
	}
	return template.ContextHook(res.Records)
}

// Bundle renders the records as the fenced JSONL block, marking the record
// that matches the context marker (or the entry record without one).
func (res *Resolved) Bundle(marker map[string]any) string {
	return template.Bundle(res.Records, marker)
}
