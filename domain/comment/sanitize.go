package comment

import (
	"html"
	"strings"
	"unicode/utf8"

	"github.com/microcosm-cc/bluemonday"
)

// bodyPolicy is bluemonday's policy for user-generated content: formatting, lists,
// tables, links and images stay; scripts, styles, forms, event handler attributes
// (on*) and URLs of any scheme but http, https and mailto (javascript:, data:) go.
// Links get rel="nofollow". A Policy is safe for concurrent use once built.
var bodyPolicy = bluemonday.UGCPolicy()

// textPolicy keeps only the text of a sanitized body, for the activity excerpt. Tags
// become spaces so "<p>a</p><p>b</p>" does not read as "ab".
var textPolicy = bluemonday.StrictPolicy().AddSpaceWhenStrippingTag(true)

// mentionPolicy is textPolicy without code: an @name inside a code sample is not a
// mention.
var mentionPolicy = bluemonday.StrictPolicy().AddSpaceWhenStrippingTag(true).SkipElementsContent("code", "pre")

// Sanitize returns body with every unsafe element and attribute removed. It runs on
// create and on edit, so no stored body ever holds script.
func Sanitize(body string) string {
	return strings.TrimSpace(bodyPolicy.Sanitize(body))
}

// plainText is the visible text of a sanitized body under policy, entities decoded and
// whitespace runs collapsed to one space.
func plainText(policy *bluemonday.Policy, sanitized string) string {
	return strings.Join(strings.Fields(html.UnescapeString(policy.Sanitize(sanitized))), " ")
}

// excerptLen is how many characters of a comment its COMMENT activity entry shows.
const excerptLen = 200

// excerpt is the activity entry's newValue: the start of the comment's text, nil when
// it has none (an image only, say).
func excerpt(sanitized string) *string {
	s := plainText(textPolicy, sanitized)
	if s == "" {
		return nil
	}
	if utf8.RuneCountInString(s) > excerptLen {
		r := []rune(s)
		s = strings.TrimSpace(string(r[:excerptLen-1])) + "…"
	}
	return &s
}
