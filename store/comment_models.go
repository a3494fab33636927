package store

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Comment is a comment on an issue; AuthorID is nil for a system comment.
type Comment struct {
	bun.BaseModel `bun:"table:comments"`

	ID        uuid.UUID  `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	IssueID   uuid.UUID  `bun:"issue_id,type:uuid"`
	AuthorID  *uuid.UUID `bun:"author_id,type:uuid"`
	Body      string     `bun:"body"`
	EditedAt  *time.Time `bun:"edited_at"`
	DeletedAt *time.Time `bun:"deleted_at"`
	CreatedAt time.Time  `bun:"created_at,nullzero,default:clock_timestamp()"`
	UpdatedAt time.Time  `bun:"updated_at,nullzero,default:clock_timestamp()"`
	// RuleID names the automation rule that wrote the comment (its author is then
	// AutomationUserID); the column's default fills it in the rule's transaction.
	RuleID *uuid.UUID `bun:"rule_id,type:uuid,scanonly"`
}

// Attachment is an uploaded file's record; StoredName is internal and never returned.
type Attachment struct {
	bun.BaseModel `bun:"table:attachments"`

	ID          uuid.UUID `bun:"id,pk,type:uuid,default:gen_random_uuid()"`
	IssueID     uuid.UUID `bun:"issue_id,type:uuid"`
	UploaderID  uuid.UUID `bun:"uploader_id,type:uuid"`
	Filename    string    `bun:"filename"`
	StoredName  string    `bun:"stored_name"`
	ContentType string    `bun:"content_type"`
	Size        int64     `bun:"size"`
	// Storage is where the file lives: disk or s3 (attachment.Location).
	Storage   string    `bun:"storage"`
	CreatedAt time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
	UpdatedAt time.Time `bun:"updated_at,nullzero,default:clock_timestamp()"`
}

// Notification is one in-app notification, its text already in the recipient's language.
type Notification struct {
	bun.BaseModel `bun:"table:notifications"`

	ID         uuid.UUID `bun:"id,pk,type:uuid"`
	UserID     uuid.UUID `bun:"user_id,type:uuid"`
	Type       string    `bun:"type"`
	Title      string    `bun:"title"`
	Body       string    `bun:"body"`
	Link       *string   `bun:"link"`
	ProjectKey *string   `bun:"project_key"`
	IssueKey   *string   `bun:"issue_key"`
	Read       bool      `bun:"read"`
	CreatedAt  time.Time `bun:"created_at,nullzero,default:clock_timestamp()"`
}
