package api_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// idForms are the spellings google/uuid accepts besides the canonical one; an id sent in
// any of them is refused wherever the request carries it.
func idForms(id uuid.UUID) map[string]string {
	s := id.String()
	return map[string]string{
		"32 hex digits": strings.ReplaceAll(s, "-", ""),
		"braces":        "{" + s + "}",
		"urn":           "urn:uuid:" + s,
	}
}

// TestIDFormsPathQueryBody sends the same id in each spelling through path, query and
// body: the non-canonical ones are 400 INVALID_UUID naming the member, the upper-case
// 36-character form (valid RFC 9562 text) is the same id as the lower-case one.
func TestIDFormsPathQueryBody(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	h := f.H
	surfaces := []struct {
		where, field string
		// target makes the resource the id names; send sends s as the id.
		target func(t *testing.T) uuid.UUID
		send   func(s string) *apitest.Response
		ok     int
	}{
		{"path", "id", func(t *testing.T) uuid.UUID { return uuid.MustParse(f.Label(t, "l-"+uuid.NewString()[:8])) },
			func(s string) *apitest.Response {
				return h.Do("PUT", f.Path("/labels/")+s, map[string]any{"color": "#445566"}, f.Owner.Access)
			}, http.StatusOK},
		{"path", "userId", func(t *testing.T) uuid.UUID { return f.Member.ID },
			func(s string) *apitest.Response {
				return h.Do("PATCH", f.Path("/members/")+s, map[string]any{"role": "MEMBER"}, f.Owner.Access)
			}, http.StatusOK},
		{"query", "assigneeId", func(t *testing.T) uuid.UUID { return f.Member.ID },
			func(s string) *apitest.Response {
				return h.Do("GET", f.Path("/issues?assigneeId=")+url.QueryEscape(s), nil, f.Owner.Access)
			}, http.StatusOK},
		{"query", "labelId", func(t *testing.T) uuid.UUID { return uuid.MustParse(f.Label(t, "q-"+uuid.NewString()[:8])) },
			func(s string) *apitest.Response {
				return h.Do("GET", f.Path("/issues?labelId=")+url.QueryEscape(s), nil, f.Owner.Access)
			}, http.StatusOK},
		{"body", "assigneeId", func(t *testing.T) uuid.UUID { return f.Member.ID },
			func(s string) *apitest.Response {
				return h.Do("POST", f.Path("/issues"), map[string]any{"title": "t", "assigneeId": s}, f.Owner.Access)
			}, http.StatusCreated},
		{"body", "userId", func(t *testing.T) uuid.UUID { return h.Register("Newcomer").ID },
			func(s string) *apitest.Response {
				return h.Do("POST", f.Path("/members"), map[string]any{"userId": s, "role": "VIEWER"}, f.Owner.Access)
			}, http.StatusCreated},
		{"body", "labelIds", func(t *testing.T) uuid.UUID { return uuid.MustParse(f.Label(t, "b-"+uuid.NewString()[:8])) },
			func(s string) *apitest.Response {
				return h.Do("POST", f.Path("/issues"), map[string]any{"title": "t", "labelIds": []string{s}}, f.Owner.Access)
			}, http.StatusCreated},
	}
	for _, sf := range surfaces {
		t.Run(sf.where+" "+sf.field, func(t *testing.T) {
			id := sf.target(t)
			for form, s := range idForms(id) {
				r := sf.send(s)
				apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
				require.Equal(t, sf.field+" is not a valid id.", r.JSON(t)["message"], "%s: %s", form, r.Body)
			}
			r := sf.send(strings.ToUpper(id.String()))
			require.Equal(t, sf.ok, r.Status, "upper case: %s", r.Body)
			require.NotContains(t, string(r.Body), strings.ToUpper(id.String()), "ids are answered in lower case")
		})
	}
}

// TestIDFormsIssueRef: an issue path segment is a key or a canonical id; the other
// spellings of the id are no ref at all.
func TestIDFormsIssueRef(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	iss := f.Create(t, map[string]any{"title": "by id"})
	id := uuid.MustParse(iss["id"].(string))
	for form, s := range idForms(id) {
		r := f.H.Do("GET", f.Path("/issues/")+s, nil, f.Owner.Access)
		require.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", form, r.Body)
		require.Equal(t, "INVALID_ISSUE_REF", r.JSON(t)["reason"], "%s: %s", form, r.Body)
	}
	require.Equal(t, iss["key"], f.Get(t, strings.ToUpper(id.String()))["key"])
}

// TestQueryIDsNameTheSameField: with every id filter of the issue list malformed, the
// reply names the first of the endpoint's parameter list, each of 20 times.
func TestQueryIDsNameTheSameField(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	query := "parentId=p&sprintId=s&assigneeId=a&statusId=st&affectsVersionId=av&fixVersionId=fv&labelId=l"
	for range 20 {
		r := f.H.Do("GET", f.Path("/issues?"+query), nil, f.Owner.Access)
		apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
		require.Equal(t, "labelId is not a valid id.", r.JSON(t)["message"])
	}
	// Two malformed ids, neither first in the list.
	for range 20 {
		r := f.H.Do("GET", f.Path("/issues?sprintId=x&assigneeId=y"), nil, f.Owner.Access)
		apitest.RequireProblem(t, r, http.StatusBadRequest, "BAD_REQUEST", apitest.Reason("INVALID_UUID"))
		require.Equal(t, "assigneeId is not a valid id.", r.JSON(t)["message"])
	}
}
