package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// CustomField is a row of custom_fields: a project's own issue field. Its Type never
// changes (a trigger refuses it), since it decides which value column its values use.
type CustomField struct {
	bun.BaseModel `bun:"table:custom_fields,alias:cf"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	ProjectID uuid.UUID `bun:"project_id,type:uuid"`
	Name      string    `bun:"name"`
	Type      string    `bun:"type"`
	Required  bool      `bun:"required"`
	SortOrder int       `bun:"sort_order"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}

// CustomFieldOption is a row of custom_field_options: one choice of a DROPDOWN field.
type CustomFieldOption struct {
	bun.BaseModel `bun:"table:custom_field_options,alias:cfo"`

	ID        uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	FieldID   uuid.UUID `bun:"field_id,type:uuid"`
	Label     string    `bun:"label"`
	SortOrder int       `bun:"sort_order"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}

// CustomFieldValue is a row of custom_field_values: the value one issue holds for one
// field, in the one column of the field's type (NumberValue as numeric's decimal text).
type CustomFieldValue struct {
	bun.BaseModel `bun:"table:custom_field_values,alias:cfv"`

	IssueID     uuid.UUID  `bun:"issue_id,pk,type:uuid"`
	FieldID     uuid.UUID  `bun:"field_id,pk,type:uuid"`
	TextValue   *string    `bun:"text_value"`
	NumberValue *string    `bun:"number_value,type:numeric"`
	DateValue   *time.Time `bun:"date_value,type:date"`
	BoolValue   *bool      `bun:"bool_value"`
	OptionID    *uuid.UUID `bun:"option_id,type:uuid"`
}
