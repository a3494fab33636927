package event

import (
	"context"

	"github.com/google/uuid"
)

// taskKey marks the task a change is made by in a context.
type taskKey struct{}

// WithTask marks ctx as the work of task id (a bulk change): consumers that fold what
// one task causes (notifications: one per user, not one per issue) read it with TaskOf.
func WithTask(ctx context.Context, id uuid.UUID) context.Context {
	return context.WithValue(ctx, taskKey{}, id)
}

// TaskOf is the task ctx is the work of, nil for a change of anything else.
func TaskOf(ctx context.Context) *uuid.UUID {
	if id, ok := ctx.Value(taskKey{}).(uuid.UUID); ok {
		return &id
	}
	return nil
}
