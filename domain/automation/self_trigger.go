package automation

import (
	"strings"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
)

// A rule whose own actions cause the event it waits for, on an issue its conditions
// cannot refuse, would run again on every change it makes: the chain budget would stop
// it, but only after it spent the whole budget of every change in its project. Such a
// rule is refused when saved (docs/automation.md#self-triggering-rules):
//   - ISSUE_CREATED with CREATE_SUBTASK, unless the conditions can be false for the
//     subtask it creates (type SUBTASK, priority MEDIUM, the action's assignee, no
//     story points, the same project): each run would create issues that run it again.
//   - STATUS_CHANGED, PRIORITY_CHANGED or ASSIGNEE_CHANGED with two actions setting the
//     field to different values, one of them matching the trigger's filter, unless the
//     conditions can be false for the issue as the rule leaves it: each run would change
//     the field again. One action (or several setting the same value) stops by itself:
//     the next run changes nothing, and an unchanged field publishes no event.

// tri is a truth value a condition has on an issue known only in part.
type tri int

const (
	triFalse tri = iota
	triTrue
	triUnknown
)

// partial is what is known of an issue: Facts, and which condition types they answer.
type partial struct {
	facts Facts
	known map[string]bool
}

// eval is g's value on p: false when some condition is known to fail it, true when
// the known ones suffice, unknown otherwise.
func (g Group) eval(p partial) tri {
	if len(g.Conditions) == 0 && len(g.Groups) == 0 {
		return triTrue
	}
	// AND: false decides, OR: true decides; an unknown child leaves the rest unknown.
	decides, rest := triFalse, triTrue
	if g.Logic == LogicOr {
		decides, rest = triTrue, triFalse
	}
	out := rest
	for _, c := range g.Conditions {
		v := triUnknown
		if p.known[c.Type] {
			v = triFalse
			if c.Matches(p.facts) {
				v = triTrue
			}
		}
		if v == decides {
			return v
		}
		if v == triUnknown {
			out = triUnknown
		}
	}
	for _, sub := range g.Groups {
		v := sub.eval(p)
		if v == decides {
			return v
		}
		if v == triUnknown {
			out = triUnknown
		}
	}
	return out
}

// selfTrigger reports the first action (its request index) that makes r trigger
// itself without end, and why; ok is false when there is none. project is the rule's
// project (nil for SYSTEM).
func selfTrigger(r *Rule, project *uuid.UUID) (index int, why string, ok bool) {
	switch r.TriggerType {
	case TriggerIssueCreated:
		for _, a := range r.Actions {
			if a.Type != ActionCreateSubtask {
				continue
			}
			p := partial{facts: Facts{Type: issue.TypeSubtask, Priority: issue.PriorityMedium},
				known: map[string]bool{CondIssueType: true, CondPriority: true, CondAssignee: true, CondStoryPoints: true}}
			if id, ok := parseID(strings.TrimSpace(a.Params["assigneeId"])); ok {
				p.facts.AssigneeID = &id
			}
			if project != nil {
				p.facts.ProjectID, p.known[CondProject] = *project, true
			}
			if r.Root.eval(p) == triTrue {
				return a.index, "CREATE_SUBTASK creates an issue that triggers this ISSUE_CREATED rule again, and no condition " +
					"refuses the subtask (add e.g. ISSUE_TYPE IS_NOT SUBTASK)", true
			}
		}
	case TriggerStatusChanged, TriggerPriorityChanged, TriggerAssigneeChanged:
		action, cond, filter := ActionSetStatus, CondStatus, payloadKeyToStatusID
		switch r.TriggerType {
		case TriggerPriorityChanged:
			action, cond, filter = ActionSetPriority, CondPriority, payloadKeyPriority
		case TriggerAssigneeChanged:
			action, cond, filter = ActionSetAssignee, CondAssignee, ""
		}
		var sets []Action
		for _, a := range r.Actions {
			if a.Type == action {
				sets = append(sets, a)
			}
		}
		if len(sets) < 2 {
			return 0, "", false
		}
		key := map[string]string{ActionSetStatus: "statusId", ActionSetPriority: "priority", ActionSetAssignee: "assigneeId"}[action]
		value := func(a Action) string { return strings.ToLower(strings.TrimSpace(a.Params[key])) }
		last := value(sets[len(sets)-1])
		distinct, matching := false, -1
		want, filtered := r.filters[filter]
		for _, a := range sets {
			v := value(a)
			if v != last {
				distinct = true
			}
			if matching < 0 && (!filtered || strings.EqualFold(v, strings.TrimSpace(want))) {
				matching = a.index
			}
		}
		if !distinct || matching < 0 {
			return 0, "", false
		}
		// The issue as the rule leaves it: the field holds the last value set.
		p := partial{known: map[string]bool{cond: true}}
		switch cond {
		case CondStatus:
			id, _ := parseID(last)
			p.facts.StatusID = id
		case CondPriority:
			p.facts.Priority = strings.ToUpper(last)
		case CondAssignee:
			if id, ok := parseID(last); ok {
				p.facts.AssigneeID = &id
			}
		}
		if r.Root.eval(p) != triFalse {
			return matching, action + " sets the field this " + r.TriggerType + " rule waits for to different values in one run, " +
				"so every run triggers it again, and no condition stops it", true
		}
	}
	return 0, "", false
}
