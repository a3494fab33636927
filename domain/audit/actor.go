package audit

import "github.com/google/uuid"

// Actor is who performs an audited action and from where: the one identity every domain
// package hands the audit log, whatever else its own rules need to know of the caller.
type Actor struct {
	UserID    uuid.UUID
	Email     string
	IP        string
	UserAgent string
}

// Entry is the entry of action by a on one resource; the caller sets ProjectID or OrgID
// when the resource has one.
func (a Actor) Entry(action, resourceType, resourceID, details string) Entry {
	uid := a.UserID
	return Entry{Action: action, UserID: &uid, UserEmail: a.Email, ResourceType: resourceType,
		ResourceID: resourceID, Details: details, IPAddress: a.IP, UserAgent: a.UserAgent}
}
