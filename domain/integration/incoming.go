package integration

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/webhook"
	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store"
)

// Errors of incoming events.
var (
	// ErrUnauthenticated is a wrong or missing signature (GitHub) or token (GitLab) for an
	// existing integration.
	ErrUnauthenticated = errors.New("integration: wrong or missing signature")
	// ErrInvalidPayload is a correctly signed body that is not a JSON object.
	ErrInvalidPayload = errors.New("integration: payload is not a JSON object")
)

// MaxEventNameLength bounds the stored event name (the provider's event header).
const MaxEventNameLength = 100

// Incoming is one request to an incoming webhook path, as the provider sent it.
type Incoming struct {
	Provider   Provider
	ProjectKey string
	// Credential is the X-Hub-Signature-256 header (GitHub) or the X-Gitlab-Token header
	// (GitLab); "" when missing.
	Credential string
	// EventName is the provider's event header (X-GitHub-Event, X-Gitlab-Event), if any.
	EventName string
	// Body is the raw body, byte for byte as signed.
	Body []byte
}

// decoySecret stands in for the secret when the project or its integration does not
// exist, so that path computes the same HMAC as a real check: an unknown project and a
// wrong signature take the same work until the reply. Its result is never used.
const decoySecret = "0000000000000000000000000000000000000000000000000000000000000000"

// Receive authenticates an incoming event and stores its raw payload together with the
// job that parses it, in one transaction; it returns the stored event's id. An unknown
// project or a project without an integration for the provider is ignored: uuid.Nil and
// no error, whatever the credential says (the API answers 200 there, see
// docs/api-conventions.md#incoming-provider-events). A wrong or missing credential for an
// existing integration is ErrUnauthenticated; a correctly signed body that is not a JSON
// object is ErrInvalidPayload.
func (s *Service) Receive(ctx context.Context, in Incoming) (uuid.UUID, error) {
	var target struct {
		ProjectID uuid.UUID `bun:"project_id"`
		Secret    string    `bun:"webhook_secret"`
	}
	err := s.db.NewSelect().TableExpr("project_integrations AS pi").
		ColumnExpr("pi.project_id, pi.webhook_secret").
		Join("JOIN projects AS p ON p.id = pi.project_id").
		Where("p.key = ? AND pi.provider = ?", in.ProjectKey, string(in.Provider)).
		Scan(ctx, &target)
	found := err == nil
	if err != nil && !store.IsNotFound(err) {
		return uuid.Nil, fmt.Errorf("look up %s integration: %w", in.Provider, err)
	}
	secret := target.Secret
	if !found {
		secret = decoySecret
	}
	ok := Verify(in.Provider, secret, in.Credential, in.Body)
	switch {
	case !found:
		return uuid.Nil, nil
	case !ok:
		return uuid.Nil, ErrUnauthenticated
	case !isJSONObject(in.Body):
		return uuid.Nil, ErrInvalidPayload
	}

	ev := &store.IncomingEvent{ID: uuid.New(), ProjectID: target.ProjectID, Provider: string(in.Provider),
		EventName: clean(in.EventName, MaxEventNameLength), Payload: in.Body}
	err = store.InTx(ctx, s.db, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(ev).Exec(ctx); err != nil {
			return err
		}
		return s.bus.Enqueue(ctx, tx, river.InsertManyParams{Args: jobs.IntegrationEvent{EventID: ev.ID, ProjectID: ev.ProjectID}})
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("store %s event for %s: %w", in.Provider, in.ProjectKey, err)
	}
	return ev.ID, nil
}

// Verify checks a request's credential against the integration secret in constant time:
// GitHub's "sha256=" + lowercase hex HMAC-SHA256 of the raw body, or GitLab's token
// equal to the secret.
func Verify(p Provider, secret, credential string, body []byte) bool {
	if p == GitHub {
		// GitHub signs exactly as Taskweave's own webhooks do (sha256= and hex HMAC-SHA256).
		return hmac.Equal([]byte(credential), []byte(webhook.Sign(body, secret)))
	}
	// Comparing digests keeps even the secret's length out of the timing.
	got, want := sha256.Sum256([]byte(credential)), sha256.Sum256([]byte(secret))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// isJSONObject reports whether body is one well-formed JSON object.
func isJSONObject(body []byte) bool {
	t := bytes.TrimSpace(body)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}
