package automation

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// TestSelfTrigger is the save-time refusal of rules that would trigger themselves
// without end: which rules are refused (the action named) and which a condition stops.
func TestSelfTrigger(t *testing.T) {
	t.Parallel()
	proj := uuid.MustParse("11111111-1111-4111-8111-111111111111")
	c := func(typ, op, v string) Condition {
		return Condition{Type: typ, Operator: op, Params: map[string]string{"value": v}}
	}
	act := func(i int, typ string, params map[string]string) Action {
		return Action{Type: typ, Params: params, index: i}
	}
	sub := func(i int) Action { return act(i, ActionCreateSubtask, map[string]string{}) }
	prio := func(i int, p string) Action { return act(i, ActionSetPriority, map[string]string{"priority": p}) }
	and := func(cs ...Condition) Group { return Group{Logic: LogicAnd, Conditions: cs} }
	or := func(cs ...Condition) Group { return Group{Logic: LogicOr, Conditions: cs} }
	for _, tc := range []struct {
		name    string
		trigger string
		root    Group
		actions []Action
		filters map[string]string
		refused int // the action's index, -1 for none
	}{
		{"subtasks without condition", TriggerIssueCreated, and(), []Action{prio(0, "HIGH"), sub(1), sub(2)}, nil, 1},
		{"subtasks of subtasks allowed", TriggerIssueCreated, and(c(CondIssueType, OpIs, "SUBTASK")), []Action{sub(0)}, nil, 0},
		{"conditions true for the subtask", TriggerIssueCreated, and(c(CondPriority, OpIs, "MEDIUM"), c(CondProject, OpIs, proj.String())), []Action{sub(0)}, nil, 0},
		{"not for subtasks", TriggerIssueCreated, and(c(CondIssueType, OpIsNot, "SUBTASK")), []Action{sub(0)}, nil, -1},
		{"bugs only", TriggerIssueCreated, and(c(CondIssueType, OpIs, "BUG")), []Action{sub(0)}, nil, -1},
		{"or with a known true branch", TriggerIssueCreated, or(c(CondIssueType, OpIs, "BUG"), c(CondStoryPoints, OpIs, "")), []Action{sub(0)}, nil, 0},
		{"status unknown at save", TriggerIssueCreated, and(c(CondStatus, OpIs, uuid.NewString())), []Action{sub(0)}, nil, -1},
		{"no subtask", TriggerIssueCreated, and(), []Action{prio(0, "HIGH")}, nil, -1},
		{"one priority", TriggerPriorityChanged, and(), []Action{prio(0, "HIGH")}, nil, -1},
		{"same priority twice", TriggerPriorityChanged, and(), []Action{prio(0, "HIGH"), prio(1, "high")}, nil, -1},
		{"flip flop", TriggerPriorityChanged, and(), []Action{prio(0, "HIGH"), prio(1, "LOW")}, nil, 0},
		{"flip flop filtered to the second", TriggerPriorityChanged, and(), []Action{prio(0, "HIGH"), prio(1, "LOW")},
			map[string]string{payloadKeyPriority: "LOW"}, 1},
		{"flip flop filtered to neither", TriggerPriorityChanged, and(), []Action{prio(0, "HIGH"), prio(1, "LOW")},
			map[string]string{payloadKeyPriority: "CRITICAL"}, -1},
		{"flip flop stopped by its own result", TriggerPriorityChanged, and(c(CondPriority, OpIsNot, "LOW")),
			[]Action{prio(0, "HIGH"), prio(1, "LOW")}, nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Rule{TriggerType: tc.trigger, Root: tc.root, Actions: tc.actions, filters: tc.filters}
			i, why, ok := selfTrigger(r, &proj)
			if tc.refused < 0 {
				require.False(t, ok, why)
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.refused, i)
			require.NotEmpty(t, why)
		})
	}
}
