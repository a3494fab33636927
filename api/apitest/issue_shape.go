package apitest

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// IssueResponseMembers is IssueResponse's member list (api/openapi/40-issues.yaml),
// exactly.
var IssueResponseMembers = []string{"id", "key", "title", "description", "type", "priority", "storyPoints", "statusId",
	"statusName", "statusCategory", "projectId", "assigneeId", "assigneeName", "reporterId", "reporterName", "parentId",
	"dueDate", "sprintId", "sprintName", "createdAt", "updatedAt", "refs", "labels", "fixVersions", "affectsVersions",
	"customFields", "projectKey", "slaStartTime", "importedKey"}

// RequireIssueShape asserts that m has exactly IssueResponseMembers, and maybe a
// search's highlight, a string (the one optional member).
func RequireIssueShape(t testing.TB, m map[string]any) {
	t.Helper()
	got := make([]string, 0, len(m))
	for k, v := range m {
		if k == "highlight" {
			require.IsType(t, "", v, "highlight")
			continue
		}
		got = append(got, k)
	}
	want := append([]string(nil), IssueResponseMembers...)
	sort.Strings(got)
	sort.Strings(want)
	require.Equal(t, want, got)
	require.NotContains(t, m, "status")
}
