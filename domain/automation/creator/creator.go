// Package creator decides whether an automation rule's creator may still have it act,
// and disables the rules of creators who may not (docs/automation.md#creator-checks). A
// rule acts only while its creator is an active user with at least MEMBER in the rule's
// project (a SYSTEM rule: a system ADMIN). It is a package of its own, importing only
// audit and store, so account and membership changes (domain/auth, domain/project),
// which automation itself depends on, can call it in their own transaction.
package creator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/store"
)

// AuditDisabled is the audit action of a rule disabled because its creator may no
// longer have it act (WRITE level).
const AuditDisabled = "AUTOMATION_RULE_DISABLED"

// refusalSQL is why the creator (u) of rule r may not have it act, NULL when they may:
// p, pm and om are the rule's project and the creator's membership rows in it and in
// its organization (an organization OWNER or ADMIN is a project ADMIN).
const refusalSQL = `CASE
	WHEN u.id IS NULL THEN 'the rule''s creator no longer exists'
	WHEN u.deleted_at IS NOT NULL THEN 'the rule''s creator was deleted'
	WHEN NOT u.active THEN 'the rule''s creator is deactivated'
	WHEN r.project_id IS NULL THEN
		CASE WHEN u.system_role <> 'ADMIN' THEN 'the SYSTEM rule''s creator is no longer a system ADMIN' END
	WHEN p.owner_id = u.id OR pm.role IN ('ADMIN', 'MEMBER') OR om.role IN ('OWNER', 'ADMIN') THEN NULL
	WHEN pm.role IS NOT NULL THEN 'the rule''s creator has the role ' || pm.role || ' in the project, below MEMBER'
	ELSE 'the rule''s creator is no longer a member of the project' END`

// rulesFrom joins what refusalSQL reads to the rules r.
const rulesFrom = `FROM automation_rules AS r
	LEFT JOIN users AS u ON u.id = r.created_by
	LEFT JOIN projects AS p ON p.id = r.project_id
	LEFT JOIN project_members AS pm ON pm.project_id = r.project_id AND pm.user_id = r.created_by
	LEFT JOIN organization_members AS om ON om.org_id = p.org_id AND om.user_id = r.created_by`

// Refusals answers, for the rules ids that may not act, why: one query.
func Refusals(ctx context.Context, db bun.IDB, ids []uuid.UUID) (map[uuid.UUID]string, error) {
	out := map[uuid.UUID]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		ID     uuid.UUID `bun:"id"`
		Reason string    `bun:"reason"`
	}
	err := db.NewRaw(`SELECT * FROM (SELECT r.id, `+refusalSQL+` AS reason `+rulesFrom+` WHERE r.id IN (?)) AS x
		WHERE x.reason IS NOT NULL`, bun.In(ids)).Scan(ctx, &rows)
	if err != nil && !store.IsNotFound(err) {
		return nil, fmt.Errorf("check rule creators: %w", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Reason
	}
	return out, nil
}

// Refusal is why rule id's creator may not have it act, "" when they may.
func Refusal(ctx context.Context, db bun.IDB, id uuid.UUID) (string, error) {
	m, err := Refusals(ctx, db, []uuid.UUID{id})
	return m[id], err
}

// UserChanged disables, in tx, the enabled rules userID created that they may no
// longer have act: called by the account and membership changes that can take that
// right away (deactivation, deletion, removal from a project, a lower project role),
// after their change and in their transaction. by made the change (the audit actor).
func UserChanged(ctx context.Context, tx bun.Tx, rec *audit.Recorder, by audit.Actor, userID uuid.UUID) error {
	return disable(ctx, tx, rec, &by, "r.created_by = ?", userID)
}

// Disable disables, in tx, those of the rules ids that are enabled and whose creator
// may not have them act (found so by a run): audited with the system as actor.
func Disable(ctx context.Context, tx bun.Tx, rec *audit.Recorder, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	return disable(ctx, tx, rec, nil, "r.id IN (?)", bun.In(ids))
}

// disable sets enabled false with the reason on the enabled rules where selects whose
// creator may not have them act, and records one audit entry per rule.
func disable(ctx context.Context, tx bun.Tx, rec *audit.Recorder, by *audit.Actor, where string, args ...any) error {
	var rows []struct {
		ID        uuid.UUID  `bun:"id"`
		ProjectID *uuid.UUID `bun:"project_id"`
		Name      string     `bun:"name"`
		CreatedBy *uuid.UUID `bun:"created_by"`
		Reason    string     `bun:"disabled_reason"`
	}
	err := tx.NewRaw(`UPDATE automation_rules AS t SET enabled = false, disabled_reason = x.reason, disabled_at = now()
		FROM (SELECT r.id, `+refusalSQL+` AS reason `+rulesFrom+` WHERE r.enabled AND `+where+` FOR NO KEY UPDATE OF r) AS x
		WHERE t.id = x.id AND x.reason IS NOT NULL
		RETURNING t.id, t.project_id, t.name, t.created_by, t.disabled_reason`, args...).Scan(ctx, &rows)
	if err != nil && !store.IsNotFound(err) {
		return fmt.Errorf("disable rules: %w", err)
	}
	for _, r := range rows {
		details, _ := json.Marshal(map[string]any{"ruleName": r.Name, "creatorId": r.CreatedBy, "reason": r.Reason})
		e := audit.Entry{Action: AuditDisabled, ProjectID: r.ProjectID, ResourceType: "AUTOMATION_RULE",
			ResourceID: r.ID.String(), Details: string(details)}
		if by != nil {
			e.UserID, e.UserEmail, e.IPAddress, e.UserAgent = &by.UserID, by.Email, by.IP, by.UserAgent
		}
		if err := rec.Record(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}
