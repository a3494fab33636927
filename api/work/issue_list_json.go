package work

import (
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/taskweave/taskweave/api/core"
)

// The issue list is the busiest read of the API and its page is tens of kilobytes:
// encoding/json spent most of its time there in reflection and in one allocation per
// id (uuid.UUID's MarshalText). appendIssuePage writes the same bytes by hand; a test
// compares it with encoding/json byte for byte (TestAppendIssuePageMatchesEncodingJSON).

// listBuffers are the list's encoding buffers, reused across requests (a page of 50 is
// about 60 kB).
var listBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// appendIssuePage appends the page's JSON, as json.Encoder.Encode writes it (a trailing
// newline included); ok is false where encoding/json would fail (a number that is no
// JSON number), the caller then lets encoding/json report it.
func appendIssuePage(b []byte, p core.Page[core.IssueResponse]) (_ []byte, ok bool) {
	b = append(b, `{"content":[`...)
	for i := range p.Content {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendIssue(b, &p.Content[i]); !ok {
			return b, false
		}
	}
	b = append(b, ']')
	// The page's other members: encoding/json's, after its "content" member.
	p.Content = nil
	meta, err := json.Marshal(p)
	if err != nil {
		return b, false
	}
	b = append(b, meta[len(`{"content":null`):]...)
	return append(b, '\n'), true
}

func appendIssue(b []byte, r *core.IssueResponse) (_ []byte, ok bool) {
	b = append(b, `{"id":`...)
	b = appendUUID(b, r.ID)
	b = append(b, `,"key":`...)
	b = appendJSONString(b, r.Key)
	b = append(b, `,"title":`...)
	b = appendJSONString(b, r.Title)
	b = append(b, `,"description":`...)
	b = appendStringPtr(b, r.Description)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, r.Type)
	b = append(b, `,"priority":`...)
	b = appendJSONString(b, r.Priority)
	b = append(b, `,"storyPoints":`...)
	if r.StoryPoints == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*r.StoryPoints), 10)
	}
	b = append(b, `,"statusId":`...)
	b = appendUUID(b, r.StatusID)
	b = append(b, `,"statusName":`...)
	b = appendJSONString(b, r.StatusName)
	b = append(b, `,"statusCategory":`...)
	b = appendJSONString(b, r.StatusCategory)
	b = append(b, `,"projectId":`...)
	b = appendUUID(b, r.ProjectID)
	b = append(b, `,"assigneeId":`...)
	b = appendUUIDPtr(b, r.AssigneeID)
	b = append(b, `,"assigneeName":`...)
	b = appendStringPtr(b, r.AssigneeName)
	b = append(b, `,"reporterId":`...)
	b = appendUUID(b, r.ReporterID)
	b = append(b, `,"reporterName":`...)
	b = appendJSONString(b, r.ReporterName)
	b = append(b, `,"parentId":`...)
	b = appendUUIDPtr(b, r.ParentID)
	b = append(b, `,"dueDate":`...)
	b = appendStringPtr(b, r.DueDate)
	b = append(b, `,"sprintId":`...)
	b = appendUUIDPtr(b, r.SprintID)
	b = append(b, `,"sprintName":`...)
	b = appendStringPtr(b, r.SprintName)
	b = append(b, `,"createdAt":`...)
	b = appendJSONString(b, r.CreatedAt)
	b = append(b, `,"updatedAt":`...)
	b = appendJSONString(b, r.UpdatedAt)
	b = append(b, `,"refs":`...)
	if b, ok = appendMarshaled(b, r.Refs); !ok {
		return b, false
	}
	b = append(b, `,"labels":`...)
	if r.Labels == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, l := range r.Labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendUUID(b, l.ID)
			b = append(b, `,"name":`...)
			b = appendJSONString(b, l.Name)
			b = append(b, `,"color":`...)
			b = appendJSONString(b, l.Color)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"fixVersions":`...)
	b = appendVersions(b, r.FixVersions)
	b = append(b, `,"affectsVersions":`...)
	b = appendVersions(b, r.AffectsVersions)
	b = append(b, `,"customFields":`...)
	if r.CustomFields == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.CustomFields {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendCustomFieldValue(b, &r.CustomFields[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"projectKey":`...)
	b = appendJSONString(b, r.ProjectKey)
	b = append(b, `,"slaStartTime":`...)
	b = appendStringPtr(b, r.SLAStartTime)
	b = append(b, `,"importedKey":`...)
	b = appendStringPtr(b, r.ImportedKey)
	if r.Highlight != nil {
		b = append(b, `,"highlight":`...)
		b = appendJSONString(b, *r.Highlight)
	}
	return append(b, '}'), true
}

func appendCustomFieldValue(b []byte, v *core.CustomFieldValueResponse) (_ []byte, ok bool) {
	b = append(b, `{"fieldId":`...)
	b = appendUUID(b, v.FieldID)
	b = append(b, `,"fieldName":`...)
	b = appendJSONString(b, v.FieldName)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, v.Type)
	b = append(b, `,"required":`...)
	b = strconv.AppendBool(b, v.Required)
	b = append(b, `,"textValue":`...)
	b = appendStringPtr(b, v.TextValue)
	b = append(b, `,"numberValue":`...)
	switch {
	case v.NumberValue == nil:
		b = append(b, "null"...)
	case *v.NumberValue == "":
		b = append(b, '0') // as encoding/json writes an empty json.Number
	case !isJSONNumber(string(*v.NumberValue)):
		return b, false
	default:
		b = append(b, *v.NumberValue...)
	}
	b = append(b, `,"dateValue":`...)
	b = appendStringPtr(b, v.DateValue)
	b = append(b, `,"booleanValue":`...)
	if v.BooleanValue == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendBool(b, *v.BooleanValue)
	}
	b = append(b, `,"optionId":`...)
	b = appendUUIDPtr(b, v.OptionID)
	b = append(b, `,"optionLabel":`...)
	b = appendStringPtr(b, v.OptionLabel)
	return append(b, '}'), true
}

func appendVersions(b []byte, vs []core.VersionResponse) []byte {
	if vs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendUUID(b, v.ID)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, v.Name)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendMarshaled appends encoding/json's encoding of v (for members the list rarely
// fills).
func appendMarshaled(b []byte, v any) (_ []byte, ok bool) {
	raw, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

const hexDigits = "0123456789abcdef"

// appendUUID appends u as a JSON string, as uuid.UUID's MarshalText writes it.
func appendUUID(b []byte, u uuid.UUID) []byte {
	b = append(b, '"')
	for i, x := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hexDigits[x>>4], hexDigits[x&0x0f])
	}
	return append(b, '"')
}

func appendUUIDPtr(b []byte, u *uuid.UUID) []byte {
	if u == nil {
		return append(b, "null"...)
	}
	return appendUUID(b, *u)
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return appendJSONString(b, *s)
}

// appendJSONString appends s as encoding/json writes a string with HTML escaping on
// (its default): ", \ and control characters escaped, <, > and & as \u003c etc.,
// invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0x0f])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0x0f])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// isJSONNumber reports whether s is a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isJSONNumber(s string) bool {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i + 1)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}
