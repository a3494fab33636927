package audit

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"
)

// Automation names the automation rule, and its creator, whose run made a change: every
// audit entry recorded under a context carrying it (the rule's transaction) names them
// in its details ("automation": {...}), whoever the entry's actor is.
type Automation struct {
	RuleID    uuid.UUID  `json:"ruleId"`
	RuleName  string     `json:"ruleName"`
	CreatorID *uuid.UUID `json:"creatorId"`
}

type automationKey struct{}

// WithAutomation returns ctx carrying a: the changes made under it are a rule's.
func WithAutomation(ctx context.Context, a Automation) context.Context {
	return context.WithValue(ctx, automationKey{}, a)
}

// AutomationOf is the rule ctx carries, if any.
func AutomationOf(ctx context.Context) (Automation, bool) {
	a, ok := ctx.Value(automationKey{}).(Automation)
	return a, ok
}

// withAutomation adds "automation" to details, a JSON object's text (or empty); other
// text is left as it is, there being no member to add.
func withAutomation(details string, a Automation) string {
	d := strings.TrimSpace(details)
	if d == "" {
		d = "{}"
	}
	var m map[string]json.RawMessage
	if !strings.HasPrefix(d, "{") || json.Unmarshal([]byte(d), &m) != nil {
		return details
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	raw, err := json.Marshal(a)
	if err != nil {
		return details
	}
	m["automation"] = raw
	out, err := json.Marshal(m)
	if err != nil {
		return details
	}
	return string(out)
}
