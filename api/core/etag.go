package core

import (
	"crypto/sha256"
	"encoding/base64"
)

// ETag is the weak tag of a reply body (docs/api-conventions.md#conditional-requests):
// equal JSON bytes, equal tag. The conditional middleware tags the replies clients poll
// with it; a handler that serves cached bytes keeps their tag with them and sets it
// itself, so a poll of a big unchanged reply does not hash it again.
func ETag(body []byte) string {
	sum := sha256.Sum256(body)
	return `W/"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}
