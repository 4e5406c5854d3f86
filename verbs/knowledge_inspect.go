package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/mailbox"
)

func init() {
	inspectRoutes["knowledge"] = &inspectRoute{name: "knowledge", views: []string{"status"}, handle: inspectKnowledge}
}

// inspectKnowledge asks the kernel (starting it: only the kernel opens
// stores) for its open stores and the caller's store status.
func inspectKnowledge(_ context.Context, env *Env, q *inspectQuery) (*inspectOutput, error) {
	var res KnowledgeInspect
	if err := env.Call("knowledge", &KnowledgeCall{Op: "inspect"}, &res); err != nil {
		return nil, err
	}
	var b strings.Builder
	project := res.ProjectStore
	if project == "" {
		project = "none"
	}
	fmt.Fprintf(&b, "knowledge open_stores=%d idle_timeout_s=%d project_store=%s personal_store=%s\n",
		len(res.Open), res.IdleTimeoutMS/1000, project, res.PersonalStore)
	for _, o := range res.Open {
		fmt.Fprintf(&b, "open %s actor=%s users=%d idle_ms=%d path=%s\n", o.Layer, o.Actor, o.Users, o.IdleMS, o.Path)
	}
	b.WriteString(api.Text(&api.StatusResult{Stores: res.Stores}))
	next := []string{"pi-actors knowledge query_graph operation=search entityType=molecule"}
	if res.ProjectStore == "" {
		next = append(next, "pi-actors knowledge init")
	}
	b.WriteString(strings.TrimPrefix(nextText(next), " "))
	return &inspectOutput{text: b.String(), details: &res}, nil
}

// knowledgeAddress reports whether a message goes to the knowledge actor.
func knowledgeAddress(to string) bool {
	a, err := mailbox.Parse(to)
	return err == nil && a.Kind == mailbox.KindKnowledge
}

// knowledgeMessageOutcome renders the answer to a message to=knowledge
// type=knowledge.<op>: the operation's own result and text, as `pi-actors
// knowledge <op>` prints them.
func knowledgeMessageOutcome(m *Message, raw json.RawMessage) (*Outcome, error) {
	op := strings.TrimPrefix(m.Type, "knowledge.")
	req, err := api.Decode(op, m.Body)
	if err != nil {
		return nil, err
	}
	out, err := KnowledgeOutcome(req, raw)
	if err != nil {
		return nil, err
	}
	if m.Verbose {
		out.Text = strings.TrimSuffix(out.Text, "\n") + "\n" + prettyJSON(map[string]any{"message": m, "result": raw})
	}
	return out, nil
}
