package store

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Task is a row of tasks: one long piece of work (bulk change, export, import), its
// progress and its cursor (docs/tasks.md).
type Task struct {
	bun.BaseModel `bun:"table:tasks,alias:t"`

	ID              uuid.UUID       `bun:"id,pk,type:uuid"`
	Kind            string          `bun:"kind"`
	State           string          `bun:"state"`
	CreatedBy       uuid.UUID       `bun:"created_by,type:uuid"`
	ProjectID       *uuid.UUID      `bun:"project_id,type:uuid"`
	ProjectKey      *string         `bun:"project_key"`
	Params          json.RawMessage `bun:"params,type:jsonb"`
	Items           json.RawMessage `bun:"items,type:jsonb"`
	Cursor          int             `bun:"cursor"`
	StateData       json.RawMessage `bun:"state_data,type:jsonb"`
	Total           int             `bun:"total"`
	Done            int             `bun:"done"`
	Failed          int             `bun:"failed"`
	Errors          []TaskError     `bun:"errors,type:jsonb"`
	ResultKey       *string         `bun:"result_key"`
	ResultName      *string         `bun:"result_name"`
	ResultType      *string         `bun:"result_type"`
	CancelRequested bool            `bun:"cancel_requested"`
	PushedAt        *time.Time      `bun:"pushed_at"`
	CreatedAt       time.Time       `bun:"created_at,nullzero,default:now()"`
	StartedAt       *time.Time      `bun:"started_at"`
	FinishedAt      *time.Time      `bun:"finished_at"`
}

// TaskError is one item a task could not apply.
type TaskError struct {
	Item    string `json:"item"`
	Code    string `json:"code"`
	Message string `json:"message"`
}
