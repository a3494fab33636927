// Package locale holds the English and German text catalogs for every user-facing
// message (errors, notifications, e-mails) and picks a language for a reader.
package locale

import (
	"strings"

	"github.com/samber/lo"
)

// Supported languages; English is the fallback.
const (
	English = "en"
	German  = "de"
)

// Supported reports whether lang is a language Taskweave speaks.
func Supported(lang string) bool { return lang == English || lang == German }

// Pick chooses the language: the stored preference when set, else the first supported
// entry of an Accept-Language header, else English.
func Pick(stored *string, acceptLanguage string) string {
	if stored != nil && Supported(*stored) {
		return *stored
	}
	best, bestQ := English, -1.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if !Supported(base) {
			continue
		}
		q := 1.0
		if p := strings.TrimSpace(params); strings.HasPrefix(p, "q=") {
			q = parseQ(strings.TrimPrefix(p, "q="))
		}
		if q > bestQ {
			best, bestQ = base, q
		}
	}
	return best
}

func parseQ(s string) float64 {
	// q values are 0, 1 or 0.xxx; anything else counts as 1.
	if s == "0" || s == "0.0" || s == "0.00" || s == "0.000" {
		return 0
	}
	if strings.HasPrefix(s, "0.") {
		v, scale := 0.0, 0.1
		for _, c := range s[2:] {
			if c < '0' || c > '9' {
				break
			}
			v += float64(c-'0') * scale
			scale /= 10
		}
		return v
	}
	return 1
}

// T renders the message key in lang with {name} placeholders filled from args
// (name, value pairs). An unknown key renders as itself so nothing is lost.
func T(lang, key string, args ...string) string {
	cat := catalogs[lang]
	if cat == nil {
		cat = catalogs[English]
	}
	msg, ok := cat[key]
	if !ok {
		msg, ok = catalogs[English][key]
		if !ok {
			return key
		}
	}
	if len(args) == 0 {
		return msg
	}
	pairs := make([]string, 0, len(args))
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, "{"+args[i]+"}", args[i+1])
	}
	return strings.NewReplacer(pairs...).Replace(msg)
}

// Keys lists every key of a language's catalog; the catalogs test compares them.
func Keys(lang string) []string { return lo.Keys(catalogs[lang]) }

// Raw returns the unrendered text of key in lang.
func Raw(lang, key string) (string, bool) {
	s, ok := catalogs[lang][key]
	return s, ok
}

var catalogs = map[string]map[string]string{English: en, German: de}
