package automation_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/workflow"
	"github.com/taskweave/taskweave/store"
)

// TestRefusal: what the domain refuses fails the rule (FAILED in its log); what the
// infrastructure fails retries the job.
func TestRefusal(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err     error
		refusal bool
	}{
		{workflow.ErrTransitionNotAllowed, true},
		{&workflow.GuardError{Field: "assigneeId"}, true},
		{fmt.Errorf("update: %w", issue.ErrAssigneeNotMember), true},
		{&pgconn.PgError{Code: "23505", ConstraintName: "x"}, true},     // a constraint
		{&pgconn.PgError{Code: "22001"}, true},                          // a value too long
		{errors.New("something nobody foresaw"), true},                  // shows in the log
		{fmt.Errorf("load: %w", &pgconn.PgError{Code: "40P01"}), false}, // deadlock: retry
		{&pgconn.PgError{Code: "57P01"}, false},                         // server shutting down
		{fmt.Errorf("x: %w", store.ErrUnavailable), false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("tx: %w", context.Canceled), false},
	} {
		require.Equal(t, c.refusal, automation.Refusal(c.err), "%v", c.err)
	}
}
