package auth

import (
	"errors"
	"fmt"
)

// Errors of the account and credential rules; api/ maps each to its status
// (docs/api-conventions.md#errors).
var (
	ErrInvalidCredentials     = errors.New("auth: invalid credentials")
	ErrInvalidRefreshToken    = errors.New("auth: invalid refresh token")
	ErrRegistrationDisabled   = errors.New("auth: registration disabled")
	ErrDuplicateEmail         = errors.New("auth: duplicate email")
	ErrInvalidCurrentPassword = errors.New("auth: invalid current password")
	ErrNoPassword             = errors.New("auth: account has no password")
	ErrLastAdmin              = errors.New("auth: last active admin")
	ErrUserDeleted            = errors.New("auth: user deleted")
	ErrUserNotFound           = errors.New("auth: user not found")
	ErrTokenNotFound          = errors.New("auth: token not found")
	// ErrUnauthenticated means the presented credential is missing, malformed, expired,
	// revoked or belongs to an inactive user: always a 401.
	ErrUnauthenticated = errors.New("auth: unauthenticated")
	// ErrTokenExpired is the ErrUnauthenticated of a validly signed access token past its
	// exp: the client refreshes and retries (401 reason TOKEN_EXPIRED).
	ErrTokenExpired = fmt.Errorf("%w: token expired", ErrUnauthenticated)
)
