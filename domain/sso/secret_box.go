package sso

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
)

// SecretBox seals SSO client secrets at rest with AES-256-GCM under SHA-256 of the JWT
// signing secret: every replica derives the same key from its configuration, and a
// database dump alone does not reveal a secret. Changing TW_JWT_SECRET makes the
// stored secrets unreadable; each config's secret must then be entered again.
type SecretBox struct{ aead cipher.AEAD }

// NewSecretBox derives the key from the JWT signing secret.
func NewSecretBox(jwtSecret string) (*SecretBox, error) {
	key := sha256.Sum256([]byte(jwtSecret))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret box: %w", err)
	}
	return &SecretBox{aead: aead}, nil
}

// Seal encrypts plaintext under a fresh random nonce: base64(nonce || ciphertext || tag).
func (b *SecretBox) Seal(plaintext string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secret box nonce: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b.aead.Seal(nonce, nonce, []byte(plaintext), nil)), nil
}

// errUnsealable is a stored secret this key cannot open (the JWT secret changed, or
// the column was edited by hand).
var errUnsealable = errors.New("sso: stored client secret cannot be decrypted")

// Open decrypts what Seal produced.
func (b *SecretBox) Open(sealed string) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", errUnsealable
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], nil)
	if err != nil {
		return "", errUnsealable
	}
	return string(plain), nil
}

// MaxSecretLength is the longest client secret accepted: sealed and encoded it still
// fits the 500-character column.
const MaxSecretLength = 255
