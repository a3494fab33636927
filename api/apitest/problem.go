package apitest

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// ReasonCheck is what RequireProblem asserts of a problem body's reason: one option of
// Reason, NoReason, ReasonOrNone or AnyReason, so no call leaves it unchecked by accident.
type ReasonCheck struct {
	want string
	any  bool
}

// Reason requires the body's reason to be reason (never empty: that is NoReason).
func Reason(reason string) ReasonCheck {
	if reason == "" {
		panic("apitest.Reason: an empty reason; use NoReason, or ReasonOrNone for a table's value")
	}
	return ReasonCheck{want: reason}
}

// NoReason requires the body to have no reason member.
var NoReason = ReasonCheck{}

// AnyReason leaves the reason unchecked: for answers whose reason is not the point of
// the test and may be one of several.
var AnyReason = ReasonCheck{any: true}

// ReasonOrNone is Reason(reason), or NoReason when reason is empty: for table tests whose
// rows hold either.
func ReasonOrNone(reason string) ReasonCheck { return ReasonCheck{want: reason} }

// RequireProblem asserts that r is the problem body of docs/api-conventions.md#errors
// with status, code and the reason check, and returns the decoded body.
func RequireProblem(tb testing.TB, r *Response, status int, code string, reason ReasonCheck) map[string]any {
	tb.Helper()
	require.Equal(tb, status, r.Status, "%s", r.Body)
	m := r.JSON(tb)
	require.Equal(tb, code, m["code"], "%s", r.Body)
	require.EqualValues(tb, status, m["status"], "%s", r.Body)
	require.Equal(tb, http.StatusText(status), m["title"], "%s", r.Body)
	switch {
	case reason.any:
	case reason.want == "":
		require.NotContains(tb, m, "reason", "%s", r.Body)
	default:
		require.Equal(tb, reason.want, m["reason"], "%s", r.Body)
	}
	return m
}
