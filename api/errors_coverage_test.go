package api

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/samber/lo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/core"
	"github.com/taskweave/taskweave/domain/attachment"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/automation"
	"github.com/taskweave/taskweave/domain/board"
	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/domain/customfield"
	"github.com/taskweave/taskweave/domain/dashboard"
	"github.com/taskweave/taskweave/domain/idempotency"
	"github.com/taskweave/taskweave/domain/integration"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/label"
	"github.com/taskweave/taskweave/domain/notify"
	"github.com/taskweave/taskweave/domain/organization"
	"github.com/taskweave/taskweave/domain/project"
	"github.com/taskweave/taskweave/domain/queue"
	"github.com/taskweave/taskweave/domain/report"
	"github.com/taskweave/taskweave/domain/servicedesk"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/domain/sso"
	"github.com/taskweave/taskweave/domain/task"
	"github.com/taskweave/taskweave/domain/user"
	"github.com/taskweave/taskweave/domain/version"
	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/domain/workflow"
)

// domainErrors is every exported Err… variable of domain/, by package.name.
// TestDomainErrorsListed keeps it complete: a new sentinel fails that test until it is
// added here, and then TestDomainErrorsAreNot500 until the error tables map it.
var domainErrors = map[string]error{
	"attachment.ErrContent":      attachment.ErrContent,
	"attachment.ErrFileNotFound": attachment.ErrFileNotFound,
	"attachment.ErrNotFound":     attachment.ErrNotFound,
	"attachment.ErrNoBucket":     attachment.ErrNoBucket,
	"attachment.ErrNotUploader":  attachment.ErrNotUploader,
	"attachment.ErrStorage":      attachment.ErrStorage,
	"attachment.ErrTooLarge":     attachment.ErrTooLarge,

	"auth.ErrDuplicateEmail":         auth.ErrDuplicateEmail,
	"auth.ErrInvalidCredentials":     auth.ErrInvalidCredentials,
	"auth.ErrInvalidCurrentPassword": auth.ErrInvalidCurrentPassword,
	"auth.ErrInvalidRefreshToken":    auth.ErrInvalidRefreshToken,
	"auth.ErrLastAdmin":              auth.ErrLastAdmin,
	"auth.ErrNoPassword":             auth.ErrNoPassword,
	"auth.ErrRegistrationDisabled":   auth.ErrRegistrationDisabled,
	"auth.ErrTokenNotFound":          auth.ErrTokenNotFound,
	"auth.ErrUnauthenticated":        auth.ErrUnauthenticated,
	"auth.ErrTokenExpired":           auth.ErrTokenExpired,
	"auth.ErrUserDeleted":            auth.ErrUserDeleted,
	"auth.ErrUserNotFound":           auth.ErrUserNotFound,

	"automation.ErrNotFound":          automation.ErrNotFound,
	"automation.ErrCreatorIneligible": automation.ErrCreatorIneligible,
	"automation.ErrDeliveryGone":      automation.ErrDeliveryGone,

	"board.ErrNoActiveSprint": board.ErrNoActiveSprint,

	"comment.ErrEmpty":            comment.ErrEmpty,
	"comment.ErrNotAuthor":        comment.ErrNotAuthor,
	"comment.ErrNotAuthorOrAdmin": comment.ErrNotAuthorOrAdmin,
	"comment.ErrNotFound":         comment.ErrNotFound,

	"customfield.ErrDuplicateFields": customfield.ErrDuplicateFields,
	"customfield.ErrDuplicateLabel":  customfield.ErrDuplicateLabel,
	"customfield.ErrDuplicateName":   customfield.ErrDuplicateName,
	"customfield.ErrNotDropdown":     customfield.ErrNotDropdown,
	"customfield.ErrNotFound":        customfield.ErrNotFound,
	"customfield.ErrOptionNotFound":  customfield.ErrOptionNotFound,

	"dashboard.ErrWidgetNotFound": dashboard.ErrWidgetNotFound,

	"idempotency.ErrInProgress": idempotency.ErrInProgress,
	"idempotency.ErrKeyReused":  idempotency.ErrKeyReused,
	"idempotency.ErrNotStored":  idempotency.ErrNotStored,

	"integration.ErrExists":          integration.ErrExists,
	"integration.ErrInvalidPayload":  integration.ErrInvalidPayload,
	"integration.ErrNotFound":        integration.ErrNotFound,
	"integration.ErrUnauthenticated": integration.ErrUnauthenticated,

	"issue.ErrAssigneeNotMember":  issue.ErrAssigneeNotMember,
	"issue.ErrNotFound":           issue.ErrNotFound,
	"issue.ErrParentNotFound":     issue.ErrParentNotFound,
	"issue.ErrSprintClosed":       issue.ErrSprintClosed,
	"issue.ErrSprintNotFound":     issue.ErrSprintNotFound,
	"issue.ErrSprintNotInProject": issue.ErrSprintNotInProject,
	"issue.ErrSubtaskNeedsParent": issue.ErrSubtaskNeedsParent,

	"label.ErrDuplicateName": label.ErrDuplicateName,
	"label.ErrNotFound":      label.ErrNotFound,

	"notify.ErrNotFound": notify.ErrNotFound,

	"organization.ErrAdminOnly":      organization.ErrAdminOnly,
	"organization.ErrAlreadyMember":  organization.ErrAlreadyMember,
	"organization.ErrDuplicateSlug":  organization.ErrDuplicateSlug,
	"organization.ErrLastOwner":      organization.ErrLastOwner,
	"organization.ErrMemberNotFound": organization.ErrMemberNotFound,
	"organization.ErrNotFound":       organization.ErrNotFound,
	"organization.ErrNotMember":      organization.ErrNotMember,
	"organization.ErrOwnRole":        organization.ErrOwnRole,
	"organization.ErrOwnerRule":      organization.ErrOwnerRule,
	"organization.ErrUserNotFound":   organization.ErrUserNotFound,

	"project.ErrAPIKeyNotFound": project.ErrAPIKeyNotFound,
	"project.ErrAlreadyMember":  project.ErrAlreadyMember,
	"project.ErrDuplicateKey":   project.ErrDuplicateKey,
	"project.ErrForbidden":      project.ErrForbidden,
	"project.ErrMemberNotFound": project.ErrMemberNotFound,
	"project.ErrNotFound":       project.ErrNotFound,
	"project.ErrOwnRole":        project.ErrOwnRole,
	"project.ErrOwnerProtected": project.ErrOwnerProtected,
	"project.ErrUserNotFound":   project.ErrUserNotFound,

	"queue.ErrJobNotFound":   queue.ErrJobNotFound,
	"queue.ErrJobRunning":    queue.ErrJobRunning,
	"queue.ErrQueueNotFound": queue.ErrQueueNotFound,

	"report.ErrSprintNotFound":     report.ErrSprintNotFound,
	"report.ErrSprintNotInProject": report.ErrSprintNotInProject,

	"servicedesk.ErrDeskNotFound":        servicedesk.ErrDeskNotFound,
	"servicedesk.ErrEmailTaken":          servicedesk.ErrEmailTaken,
	"servicedesk.ErrEmailReserved":       servicedesk.ErrEmailReserved,
	"servicedesk.ErrEmailNotPending":     servicedesk.ErrEmailNotPending,
	"servicedesk.ErrEmailChanged":        servicedesk.ErrEmailChanged,
	"servicedesk.ErrResendTooSoon":       servicedesk.ErrResendTooSoon,
	"servicedesk.ErrCodeInvalid":         servicedesk.ErrCodeInvalid,
	"servicedesk.ErrCodeExpired":         servicedesk.ErrCodeExpired,
	"servicedesk.ErrIncidentNotFound":    servicedesk.ErrIncidentNotFound,
	"servicedesk.ErrIncidentResolved":    servicedesk.ErrIncidentResolved,
	"servicedesk.ErrPolicyExists":        servicedesk.ErrPolicyExists,
	"servicedesk.ErrPolicyNotFound":      servicedesk.ErrPolicyNotFound,
	"servicedesk.ErrUserNotMember":       servicedesk.ErrUserNotMember,
	"servicedesk.ErrCalendarInUse":       servicedesk.ErrCalendarInUse,
	"servicedesk.ErrCalendarNotFound":    servicedesk.ErrCalendarNotFound,
	"servicedesk.ErrStatusNotInWorkflow": servicedesk.ErrStatusNotInWorkflow,
	"servicedesk.ErrTooManyCalendars":    servicedesk.ErrTooManyCalendars,

	"sprint.ErrAlreadyActive":    sprint.ErrAlreadyActive,
	"sprint.ErrDateOrder":        sprint.ErrDateOrder,
	"sprint.ErrIssueNotInSprint": sprint.ErrIssueNotInSprint,
	"sprint.ErrNotFound":         sprint.ErrNotFound,
	"sprint.ErrNotInProject":     sprint.ErrNotInProject,
	"sprint.ErrState":            sprint.ErrState,

	"sso.ErrConfigNotFound":      sso.ErrConfigNotFound,
	"sso.ErrInvalidCode":         sso.ErrInvalidCode,
	"sso.ErrIssuerRejected":      sso.ErrIssuerRejected,
	"sso.ErrLastSignInMethod":    sso.ErrLastSignInMethod,
	"sso.ErrLinkNotFound":        sso.ErrLinkNotFound,
	"sso.ErrProviderNotFound":    sso.ErrProviderNotFound,
	"sso.ErrProviderUnavailable": sso.ErrProviderUnavailable,
	"sso.ErrSessionRequired":     sso.ErrSessionRequired,

	"task.ErrFinished":    task.ErrFinished,
	"task.ErrNoResult":    task.ErrNoResult,
	"task.ErrNotFound":    task.ErrNotFound,
	"task.ErrNotUndoable": task.ErrNotUndoable,

	"user.ErrSearchForbidden": user.ErrSearchForbidden,

	"version.ErrDuplicateName": version.ErrDuplicateName,
	"version.ErrNotFound":      version.ErrNotFound,

	"webhook.ErrDeliveryNotFound": webhook.ErrDeliveryNotFound,
	"webhook.ErrDisabled":         webhook.ErrDisabled,
	"webhook.ErrNotFound":         webhook.ErrNotFound,
	"webhook.ErrURLRejected":      webhook.ErrURLRejected,

	"workflow.ErrNoDefaultStatus":      workflow.ErrNoDefaultStatus,
	"workflow.ErrStatusInUse":          workflow.ErrStatusInUse,
	"workflow.ErrStatusNotFound":       workflow.ErrStatusNotFound,
	"workflow.ErrStatusNotInWorkflow":  workflow.ErrStatusNotInWorkflow,
	"workflow.ErrTransitionNotAllowed": workflow.ErrTransitionNotAllowed,
	"workflow.ErrTransitionNotFound":   workflow.ErrTransitionNotFound,
	"workflow.ErrWorkflowNotFound":     workflow.ErrWorkflowNotFound,
}

// exportedDomainErrors parses domain/ (tests left out) for package-level exported
// variables named Err…, as package.name.
func exportedDomainErrors(t *testing.T) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join("..", "domain"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(name.Name, "Err") && name.IsExported() {
						out = append(out, f.Name.Name+"."+name.Name)
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

// TestDomainErrorsListed: domainErrors holds exactly the sentinels domain/ declares.
func TestDomainErrorsListed(t *testing.T) {
	t.Parallel()
	found := exportedDomainErrors(t)
	require.Greater(t, len(found), 50, "the parse found too few Err variables to be looking at domain/")
	missing, gone := lo.Difference(found, lo.Keys(domainErrors))
	sort.Strings(gone)
	require.Empty(t, missing, "add each new domain sentinel to domainErrors (and map it in errors_*.go)")
	require.Empty(t, gone, "domainErrors names sentinels domain/ no longer declares")
}

// TestDomainErrorsAreNot500: every domain sentinel, bare or wrapped with context as the
// domain returns them, is a classified reply, never the 500 of an unknown error (503
// UNAVAILABLE, a storage failure, is classified). A sentinel no request can meet belongs
// unexported in its package.
func TestDomainErrorsAreNot500(t *testing.T) {
	t.Parallel()
	for name, sentinel := range domainErrors {
		for _, err := range []error{sentinel, fmt.Errorf("context: %w", sentinel)} {
			e := core.NewErrors(errorTables()...).ToAPI(err)
			assert.NotEqual(t, 500, e.Status, "%s maps to %d %s", name, e.Status, e.Code)
		}
	}
}
