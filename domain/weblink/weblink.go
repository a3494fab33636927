// Package weblink is the rule for links Taskweave stores and clients render as links
// (an avatar, a repository, a provider's commit or pull request): absolute http or https
// URLs only, so a stored value can never be a javascript:, data: or other scheme a
// browser would run or load on a click.
//
// The package imports nothing of ours.
package weblink

import (
	"net/url"
	"strings"
)

// Valid reports whether s is an absolute http or https URL with a host and without user
// information, exactly as given: no surrounding or embedded whitespace, no control
// characters and no backslashes (which browsers read as slashes, or strip, and so
// could turn into another URL than the one checked).
func Valid(s string) bool {
	if s == "" || strings.ContainsAny(s, " \\") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User != nil || u.Hostname() == "" {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return true
	}
	return false
}
