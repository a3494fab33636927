package automation

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/domain/issue"
)

// RuleInput is a create request as the client sent it; Save validates it whole.
type RuleInput struct {
	Name        string
	TriggerType string
	// TriggerPayload is the JSON text of the filters as a JSON string, the filters as a
	// JSON object, or null/absent/blank for none.
	TriggerPayload json.RawMessage
	Enabled        bool
	Root           GroupInput
	Actions        []ActionInput
	// Schedule, Timezone and Filter are a SCHEDULED rule's members (schedule.go).
	Schedule *string
	Timezone *string
	Filter   json.RawMessage
}

// GroupInput is a condition group as sent; Logic "" is AND.
type GroupInput struct {
	Logic      string
	Conditions []ConditionInput
	Groups     []GroupInput
}

// ConditionInput is a condition as sent; Params values are JSON scalars.
type ConditionInput struct {
	Type     string
	Operator string
	Params   map[string]json.RawMessage
}

// ActionInput is an action as sent; a nil Position is its index in the list.
type ActionInput struct {
	Position *int
	Type     string
	Params   map[string]json.RawMessage
}

// Problem is one member of a rule that cannot be saved, named by its path in the
// request (actions[1].params.statusId), with the message key of its text.
type Problem struct {
	Field string
	Code  string
	Key   string
	Args  []string
}

// ValidationError lists every problem of a rule; nothing was saved.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Code
	}
	return "automation: invalid rule: " + strings.Join(parts, ", ")
}

// problems collects Problems in request order, one per field: the first found (a
// parameter of the wrong type is not also reported missing).
type problems []Problem

func (ps *problems) add(field, code, key string, args ...string) {
	for _, p := range *ps {
		if p.Field == field {
			return
		}
	}
	*ps = append(*ps, Problem{Field: field, Code: code, Key: key, Args: args})
}

// CodeEnum is the Problem code of a value outside its enum; the API answers it 400
// BAD_REQUEST INVALID_ENUM like every other unknown enum value.
const CodeEnum = "ENUM"

func (ps *problems) enum(field, value string, values []string) {
	ps.add(field, CodeEnum, "field.ENUM", "values", strings.Join(values, ", "), "value", value)
}

// ref is an id a rule names whose existence depends on the database: a status of the
// project's workflow, a project member, an active user.
type ref struct {
	field string
	id    uuid.UUID
}

// refs are the ids of a rule checkRefs looks up, each in one query.
type refs struct {
	statuses []ref
	members  []ref
	users    []ref
	// urls go through the outbound address check.
	urls []urlRef
}

// check validates in without the database and builds the rule it describes. project
// says whether it is a PROJECT rule, whose status ids and assignees are checked
// against the project (a SYSTEM rule's only when it runs).
func check(in RuleInput, project bool) (*Rule, refs, []Problem) {
	var ps problems
	var rs refs
	if p := limits(in); len(p) > 0 {
		return nil, rs, p
	}
	r := &Rule{Name: in.Name, TriggerType: in.TriggerType, Enabled: in.Enabled}
	switch {
	case strings.TrimSpace(in.Name) == "":
		ps.add("name", "BLANK", "field.BLANK")
	case utf8.RuneCountInString(in.Name) > MaxName:
		ps.add("name", "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(MaxName))
	}
	if !valid(Triggers, in.TriggerType) {
		ps.enum("triggerType", in.TriggerType, Triggers)
	}
	r.TriggerPayload, r.filters = checkPayload(in.TriggerType, in.TriggerPayload, project, &rs, &ps)
	checkSchedule(in, r, project, &ps)
	r.Root = checkGroup("", "rootGroupLogic", in.Root, project, &rs, &ps)
	r.Actions = checkActions(in.Actions, project, &rs, &ps)
	return r, rs, ps
}

// checkSelfTrigger refuses a rule that would trigger itself without end (see
// selfTrigger); project is the rule's project, nil for SYSTEM.
func checkSelfTrigger(r *Rule, project *uuid.UUID) []Problem {
	i, why, ok := selfTrigger(r, project)
	if !ok {
		return nil
	}
	return []Problem{{Field: "actions[" + strconv.Itoa(i) + "].type", Code: "SELF_TRIGGER", Key: "field.AUTOMATION_SELF_TRIGGER",
		Args: []string{"why", why}}}
}

// limits refuses a rule past the abuse limits before anything else is looked at.
func limits(in RuleInput) []Problem {
	var ps problems
	depth, groups, conds := 0, 0, 0
	var deepest string
	var walk func(path string, g GroupInput, level int)
	walk = func(path string, g GroupInput, level int) {
		groups++
		conds += len(g.Conditions)
		if level > depth {
			depth, deepest = level, path
		}
		if level > MaxDepth || groups > MaxGroups {
			return // deep enough to refuse; do not walk a hostile tree further
		}
		for i, c := range g.Groups {
			walk(path+"childGroups["+strconv.Itoa(i)+"].", c, level+1)
		}
	}
	walk("", in.Root, 1)
	if depth > MaxDepth {
		ps.add(strings.TrimSuffix(deepest, "."), "DEPTH", "field.AUTOMATION_DEPTH", "max", strconv.Itoa(MaxDepth))
	}
	if groups > MaxGroups {
		ps.add("childGroups", "TOO_MANY", "field.AUTOMATION_TOO_MANY", "max", strconv.Itoa(MaxGroups))
	}
	if conds > MaxConditions {
		ps.add("conditions", "TOO_MANY", "field.AUTOMATION_TOO_MANY", "max", strconv.Itoa(MaxConditions))
	}
	if len(in.Actions) > MaxActions {
		ps.add("actions", "TOO_MANY", "field.AUTOMATION_TOO_MANY", "max", strconv.Itoa(MaxActions))
	}
	return ps
}

// checkPayload reads the trigger's filters: a JSON object of strings, sent as JSON text
// or as the object itself. It returns the text to store (the client's text, or the
// object's compact form) and the filters; null or blank is no filter.
func checkPayload(trigger string, raw json.RawMessage, project bool, rs *refs, ps *problems) (*string, map[string]string) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var text string
	obj := raw
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			ps.add("triggerPayload", "JSON", "field.AUTOMATION_PAYLOAD")
			return nil, nil
		}
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
		obj = []byte(text)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(obj, &members); err != nil || members == nil {
		ps.add("triggerPayload", "JSON", "field.AUTOMATION_PAYLOAD")
		return nil, nil
	}
	if raw[0] != '"' {
		var buf bytes.Buffer
		_ = json.Compact(&buf, raw)
		text = buf.String()
	}
	filters := map[string]string{}
	for _, k := range sortedKeys(members) {
		field := "triggerPayload." + k
		var v string
		if err := json.Unmarshal(members[k], &v); err != nil {
			ps.add(field, "WRONG_TYPE", "field.AUTOMATION_STRING")
			continue
		}
		switch {
		case trigger == TriggerStatusChanged && k == payloadKeyToStatusID:
			if id, ok := parseID(v); !ok {
				ps.add(field, "INVALID_UUID", "field.AUTOMATION_UUID")
			} else if project {
				rs.statuses = append(rs.statuses, ref{field, id})
			}
		case trigger == TriggerPriorityChanged && k == payloadKeyPriority:
			if !valid(issue.Priorities, v) {
				ps.enum(field, v, issue.Priorities)
			}
		default:
			ps.add(field, "UNKNOWN_KEY", "field.AUTOMATION_PAYLOAD_KEY", "trigger", trigger, "keys", payloadKeys(trigger))
		}
		filters[k] = v
	}
	return &text, filters
}

// payloadKeys names the filters trigger has ("none" for the others).
func payloadKeys(trigger string) string {
	switch trigger {
	case TriggerStatusChanged:
		return payloadKeyToStatusID
	case TriggerPriorityChanged:
		return payloadKeyPriority
	}
	return "none"
}

// checkGroup validates a group and everything below it; prefix is the group's path
// ("" for the root, "childGroups[0]." below it), logicField the member naming its logic.
func checkGroup(prefix, logicField string, in GroupInput, project bool, rs *refs, ps *problems) Group {
	g := Group{Logic: in.Logic, Conditions: []Condition{}, Groups: []Group{}}
	if g.Logic == "" {
		g.Logic = LogicAnd
	} else if !valid(Logics, g.Logic) {
		ps.enum(logicField, g.Logic, Logics)
	}
	for i, c := range in.Conditions {
		g.Conditions = append(g.Conditions, checkCondition(prefix+"conditions["+strconv.Itoa(i)+"]", c, project, rs, ps))
	}
	for i, c := range in.Groups {
		p := prefix + "childGroups[" + strconv.Itoa(i) + "]."
		g.Groups = append(g.Groups, checkGroup(p, p+"logic", c, project, rs, ps))
	}
	return g
}

// checkCondition validates one condition: known type and operator, GT/LT only on the
// numeric field with a number, ids where the type compares ids.
func checkCondition(path string, in ConditionInput, project bool, rs *refs, ps *problems) Condition {
	c := Condition{Type: in.Type, Operator: in.Operator, Params: params(path, in.Params, ps)}
	typeOK, opOK := valid(ConditionTypes, c.Type), valid(Operators, c.Operator)
	if !typeOK {
		ps.enum(path+".type", c.Type, ConditionTypes)
	}
	if !opOK {
		ps.enum(path+".operator", c.Operator, Operators)
	}
	if !typeOK || !opOK {
		return c
	}
	field := path + ".params.value"
	value, has := c.Params["value"]
	value = strings.TrimSpace(value)
	switch {
	case c.Operator == OpGT || c.Operator == OpLT:
		if c.Type != CondStoryPoints {
			ps.add(path+".operator", "NOT_NUMERIC", "field.AUTOMATION_NOT_NUMERIC", "type", c.Type)
		} else if _, ok := number(value); !ok {
			ps.add(field, "NUMBER", "field.AUTOMATION_NUMBER")
		}
	case idCondition(c.Type):
		ids := []string{value}
		if c.Operator == OpContains {
			ids = strings.Split(value, ",")
		}
		for _, s := range ids {
			s = strings.TrimSpace(s)
			if s == "" && c.Type == CondAssignee && c.Operator != OpContains {
				continue // IS / IS_NOT "": unassigned
			}
			id, ok := parseID(s)
			if !ok {
				ps.add(field, "INVALID_UUID", "field.AUTOMATION_UUID")
				break
			}
			if c.Type == CondStatus && project {
				rs.statuses = append(rs.statuses, ref{field, id})
			}
		}
	case c.Type == CondStoryPoints && c.Operator != OpContains:
		if _, ok := number(value); value != "" && !ok {
			ps.add(field, "NUMBER", "field.AUTOMATION_NUMBER")
		}
	default:
		if !has || value == "" {
			ps.add(field, "REQUIRED", "field.AUTOMATION_REQUIRED")
		}
	}
	return c
}

// idCondition reports whether conditions of type t compare ids.
func idCondition(t string) bool { return t == CondAssignee || t == CondStatus || t == CondProject }

// checkActions validates the actions and returns them in execution order: ascending
// position, request order among equal positions.
func checkActions(in []ActionInput, project bool, rs *refs, ps *problems) []Action {
	out := make([]Action, 0, len(in))
	for i, a := range in {
		path := "actions[" + strconv.Itoa(i) + "]"
		act := Action{Position: i, Type: a.Type, Params: params(path, a.Params, ps), index: i}
		if a.Position != nil {
			act.Position = *a.Position
			if act.Position < 0 {
				ps.add(path+".position", "MIN", "field.AUTOMATION_MIN", "min", "0")
			}
		}
		checkAction(path, act, project, rs, ps)
		out = append(out, act)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Position < out[j].Position })
	return out
}

func checkAction(path string, a Action, project bool, rs *refs, ps *problems) {
	field := func(k string) string { return path + ".params." + k }
	id := func(k string, required bool, list *[]ref) {
		v := strings.TrimSpace(a.Params[k])
		if v == "" {
			if required {
				ps.add(field(k), "REQUIRED", "field.AUTOMATION_REQUIRED")
			}
			return
		}
		parsed, ok := parseID(v)
		if !ok {
			ps.add(field(k), "INVALID_UUID", "field.AUTOMATION_UUID")
			return
		}
		if list != nil {
			*list = append(*list, ref{field(k), parsed})
		}
	}
	members := &rs.members
	statuses := &rs.statuses
	if !project {
		members, statuses = nil, nil // checked when the rule runs, in the issue's project
	}
	switch a.Type {
	case ActionSetStatus:
		id("statusId", true, statuses)
	case ActionSetPriority:
		if v := a.Params["priority"]; !valid(issue.Priorities, v) {
			if v == "" {
				ps.add(field("priority"), "REQUIRED", "field.AUTOMATION_REQUIRED")
			} else {
				ps.enum(field("priority"), v, issue.Priorities)
			}
		}
	case ActionSetAssignee:
		id("assigneeId", false, members)
	case ActionSendNotification:
		id("recipientId", false, &rs.users)
	case ActionCreateComment:
		if strings.TrimSpace(a.Params["body"]) == "" {
			ps.add(field("body"), "REQUIRED", "field.AUTOMATION_REQUIRED")
		}
	case ActionSendWebhook:
		checkWebhookAction(field, a, rs, ps)
	case ActionCreateSubtask:
		if utf8.RuneCountInString(a.Params["title"]) > issue.MaxTitle {
			ps.add(field("title"), "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(issue.MaxTitle))
		}
		id("assigneeId", false, members)
	default:
		ps.enum(path+".type", a.Type, ActionTypes)
	}
}

// params turns a params object of JSON scalars into strings (numbers as written,
// booleans as true/false); null drops the key, an object or array is refused.
func params(path string, in map[string]json.RawMessage, ps *problems) map[string]string {
	out := make(map[string]string, len(in))
	for _, k := range sortedKeys(in) {
		raw := bytes.TrimSpace(in[k])
		field := path + ".params." + k
		switch {
		case len(raw) == 0 || string(raw) == "null":
			continue
		case raw[0] == '"':
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				ps.add(field, "WRONG_TYPE", "field.AUTOMATION_STRING")
				continue
			}
			if utf8.RuneCountInString(s) > MaxParam {
				ps.add(field, "LENGTH", "field.TOO_LONG", "max", strconv.Itoa(MaxParam))
				continue
			}
			out[k] = s
		case raw[0] == '{' || raw[0] == '[':
			ps.add(field, "WRONG_TYPE", "field.AUTOMATION_STRING")
		default: // number, true, false
			out[k] = string(raw)
		}
	}
	return out
}

// parseID reads an id as every id of the API is read: the 36-character form only.
func parseID(s string) (uuid.UUID, bool) {
	if len(s) != 36 {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// number parses a numeric operand (a double, as GT and LT compare).
func number(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}
