package work

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
)

// jsonListTricky are strings encoding/json escapes one way or another: quotes,
// backslashes, every control character class, HTML's <, > and &, invalid UTF-8, U+2028
// and U+2029, multi-byte runes and DEL.
var jsonListTricky = []string{
	"", "plain", `quote " and \ backslash`, "\b\f\n\r\t\x00\x01\x1f", "<script>&amp;</script>", "bad \xff utf8 \xc3",
	"line\u2028para\u2029end", "héllo 世界 🎉", "del \x7f", "\xe2\x80", `{"json":[1]}`,
}

// listTestIssue is an issue response with every nullable member set (full) or nil.
func listTestIssue(i int, full bool) core.IssueResponse {
	s := func(k int) string { return jsonListTricky[(i+k)%len(jsonListTricky)] }
	r := core.IssueResponse{
		ID: uuid.New(), Key: "ABC-" + s(0), Title: s(1), Type: "TASK", Priority: s(2), StatusID: uuid.New(),
		StatusName: s(3), StatusCategory: "TODO", ProjectID: uuid.New(), ReporterID: uuid.New(), ReporterName: s(4),
		CreatedAt: "2026-11-24T14:00:00.123456Z", UpdatedAt: "2026-11-24T14:00:01Z", ProjectKey: "ABC",
		Refs: []core.IssueRefResponse{}, Labels: []core.IssueLabelResponse{}, FixVersions: []core.VersionResponse{},
		AffectsVersions: []core.VersionResponse{}, CustomFields: []core.CustomFieldValueResponse{},
	}
	if !full {
		return r
	}
	str := func(k int) *string { v := s(k); return &v }
	id := func() *uuid.UUID { u := uuid.New(); return &u }
	points, yes := -7, true
	n1, n2, n3 := json.Number("12.50"), json.Number("-3e+4"), json.Number("")
	r.Description, r.StoryPoints, r.AssigneeID, r.AssigneeName, r.ParentID = str(5), &points, id(), str(6), id()
	r.DueDate, r.SprintID, r.SprintName, r.SLAStartTime = str(7), id(), str(8), str(9)
	r.Refs = []core.IssueRefResponse{{ID: uuid.New(), Provider: "GITHUB", RefType: "PR", ExternalID: s(1), URL: "https://x/<1>&",
		Title: str(2), CreatedAt: "2026-01-01T00:00:00Z"}}
	r.Labels = []core.IssueLabelResponse{{ID: uuid.New(), Name: s(3), Color: "#ff0000"}, {ID: uuid.New(), Name: s(4), Color: s(5)}}
	r.FixVersions = []core.VersionResponse{{ID: uuid.New(), Name: s(6)}}
	r.AffectsVersions = []core.VersionResponse{{ID: uuid.New(), Name: s(7)}, {ID: uuid.New(), Name: s(8)}}
	r.CustomFields = []core.CustomFieldValueResponse{
		{FieldID: uuid.New(), FieldName: s(1), Type: "TEXT", Required: true, TextValue: str(2)},
		{FieldID: uuid.New(), FieldName: s(3), Type: "NUMBER", NumberValue: &n1},
		{FieldID: uuid.New(), FieldName: "n", Type: "NUMBER", NumberValue: &n2},
		{FieldID: uuid.New(), FieldName: "e", Type: "NUMBER", NumberValue: &n3},
		{FieldID: uuid.New(), FieldName: "d", Type: "DATE", DateValue: str(7)},
		{FieldID: uuid.New(), FieldName: "b", Type: "CHECKBOX", BooleanValue: &yes},
		{FieldID: uuid.New(), FieldName: "o", Type: "DROPDOWN", OptionID: id(), OptionLabel: str(8)},
		{FieldID: uuid.New(), FieldName: "unset", Type: "TEXT"},
	}
	return r
}

// TestAppendIssuePageMatchesEncodingJSON proves the hand-written list encoding writes
// exactly the bytes json.Encoder.Encode writes for the same page: every member of an
// issue, nil and set, escaped strings of every kind, empty and nil slices, the page's
// totals; and that a number that is no JSON number is left to encoding/json.
func TestAppendIssuePageMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	var content []core.IssueResponse
	for i := range 2 * len(jsonListTricky) {
		content = append(content, listTestIssue(i, i%2 == 0))
	}
	nilSlices := listTestIssue(1, false)
	nilSlices.Refs, nilSlices.Labels, nilSlices.FixVersions, nilSlices.AffectsVersions, nilSlices.CustomFields = nil, nil, nil, nil, nil
	content = append(content, nilSlices)

	next := "eyJpc3N1ZXMiXQ-cursor"
	for _, pg := range []core.Page[core.IssueResponse]{
		core.NewPage(content, core.PageRequest{Page: 3, Size: 50}, 1234, &next),
		core.NewPage(content[:1], core.PageRequest{Page: 0, Size: 1}, 1, nil),
		core.NewPage([]core.IssueResponse{}, core.PageRequest{Page: 9, Size: 50}, 20, nil),
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(pg); err != nil {
			t.Fatal(err)
		}
		got, ok := appendIssuePage(nil, pg)
		if !ok {
			t.Fatal("appendIssuePage refused a page encoding/json encodes")
		}
		if !bytes.Equal(got, want.Bytes()) {
			i := 0
			for i < min(len(got), len(want.Bytes())) && got[i] == want.Bytes()[i] {
				i++
			}
			t.Fatalf("differs at byte %d:\n got: %.200s\nwant: %.200s", i, got[i:], want.Bytes()[i:])
		}
	}

	bad := listTestIssue(0, true)
	nan := json.Number("NaN")
	bad.CustomFields[1].NumberValue = &nan
	if _, ok := appendIssuePage(nil, core.NewPage([]core.IssueResponse{bad}, core.PageRequest{Size: 50}, 1, nil)); ok {
		t.Fatal("a number encoding/json rejects was encoded")
	}
	for s, want := range map[string]bool{"0": true, "-0.5": true, "1e9": true, "12E-3": true, "01": false, "1.": false,
		".5": false, "1e": false, "-": false, "+1": false, "NaN": false, "Infinity": false, "1 ": false} {
		if got := isJSONNumber(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}
