package comment

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Mentions are written @name, where name is letters (any script), digits, underscores
// and dots, and the @ starts the text or follows a character that is none of letters,
// digits and underscore (so the @ of a@b.com is no mention). A name resolves,
// ignoring case, to the project members whose display name it spells, with each run of
// spaces written as ".", as "_" or left out: "Ada Lovelace" is @ada.lovelace,
// @Ada_Lovelace or @adalovelace. Characters a name cannot hold are dropped from the
// display name first ("O'Brien" is @obrien). Dots ending a name are ignored on both
// sides, so sentence punctuation does not hide a mention ("thanks @bob." mentions Bob)
// and a member named "Jr." is @jr as well as @jr. . Mentions inside code (<code>,
// <pre>) do not count.

// isNameRune reports whether r may appear inside a mention name.
func isNameRune(r rune) bool { return isWordRune(r) || r == '.' }

// isWordRune: letters, digits and underscore; marks too, so a name typed with
// combining accents stays one name.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '_'
}

// tokens finds the @names of a plain text, in order, repeats included, in lower case
// and without trailing dots.
func tokens(text string) []string {
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		if rs[i] != '@' || (i > 0 && isWordRune(rs[i-1])) {
			continue
		}
		j := i + 1
		for j < len(rs) && isNameRune(rs[j]) {
			j++
		}
		if name := strings.TrimRight(strings.ToLower(string(rs[i+1:j])), "."); name != "" {
			out = append(out, name)
		}
		i = j - 1
	}
	return out
}

// nameForms are the spellings of a display name a mention may use (lower case, no
// trailing dots).
func nameForms(displayName string) []string {
	words := strings.FieldsFunc(strings.ToLower(displayName), unicode.IsSpace)
	for i, w := range words {
		words[i] = strings.Map(func(r rune) rune {
			if isNameRune(r) {
				return r
			}
			return -1
		}, w)
	}
	forms := []string{strings.Join(words, "."), strings.Join(words, "_"), strings.Join(words, "")}
	for i, f := range forms {
		forms[i] = strings.TrimRight(f, ".")
	}
	return forms
}

// member is a project member a mention can resolve to.
type member struct {
	ID          uuid.UUID `bun:"id"`
	DisplayName string    `bun:"display_name"`
}

// mentionable lists the active project members except exclude, in one query: the
// owner, the member rows and, for a project in an organization, the organization's
// members (every organization role inherits at least VIEWER). Names are matched in Go:
// Postgres' lower() folds only ASCII under some locales, and @names are Unicode.
func mentionable(ctx context.Context, db bun.IDB, projectID, exclude uuid.UUID) ([]member, error) {
	var out []member
	err := db.NewRaw(`SELECT u.id, u.display_name FROM users AS u
		WHERE u.active AND u.deleted_at IS NULL AND u.id <> ?
		  AND u.id IN (
			SELECT p.owner_id FROM projects AS p WHERE p.id = ?
			UNION ALL SELECT pm.user_id FROM project_members AS pm WHERE pm.project_id = ?
			UNION ALL SELECT om.user_id FROM organization_members AS om
				JOIN projects AS p ON p.org_id = om.org_id WHERE p.id = ?)
		ORDER BY u.id`,
		exclude, projectID, projectID, projectID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("load mentionable members: %w", err)
	}
	return out, nil
}

// ResolveMentions returns the members of the project the body (sanitized HTML)
// mentions, each once, in the order first mentioned, never the author (uuid.Nil for a
// system comment). Members who share a spelling are all mentioned (in id order). A
// body without an @name costs no query.
func ResolveMentions(ctx context.Context, db bun.IDB, projectID, author uuid.UUID, sanitized string) ([]uuid.UUID, error) {
	toks := tokens(plainText(mentionPolicy, sanitized))
	if len(toks) == 0 {
		return []uuid.UUID{}, nil
	}
	members, err := mentionable(ctx, db, projectID, author)
	if err != nil {
		return nil, err
	}
	return match(toks, members), nil
}

// match resolves tokens against the spellings of the members' names.
func match(toks []string, members []member) []uuid.UUID {
	byForm := map[string][]uuid.UUID{}
	for _, m := range members {
		seen := map[string]bool{}
		for _, f := range nameForms(m.DisplayName) {
			if f != "" && !seen[f] {
				seen[f] = true
				byForm[f] = append(byForm[f], m.ID)
			}
		}
	}
	out := []uuid.UUID{}
	done := map[uuid.UUID]bool{}
	for _, t := range toks {
		for _, id := range byForm[t] {
			if !done[id] {
				done[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}
