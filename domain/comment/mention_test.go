package comment_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/domain/comment"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// setup is a transaction on the package's database, rolled back when the test ends.
func setup(t *testing.T) (context.Context, bun.Tx) {
	t.Helper()
	ctx := context.Background()
	tx, err := storetest.PackageDB(t).Bun.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	return ctx, tx
}

// newUser inserts a user; state is "", "inactive" or "deleted".
func newUser(t *testing.T, ctx context.Context, tx bun.Tx, name, state string) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	require.NoError(t, tx.NewRaw(`INSERT INTO users (email, display_name, active, deleted_at)
		VALUES (?, ?, ?, CASE WHEN ? THEN now() END) RETURNING id`,
		uuid.NewString()+"@example.com", name, state != "inactive", state == "deleted").Scan(ctx, &id))
	return id
}

func exec(t *testing.T, ctx context.Context, tx bun.Tx, query string, args ...any) {
	t.Helper()
	_, err := tx.NewRaw(query, args...).Exec(ctx)
	require.NoError(t, err)
}

// TestResolveMentions runs the mention rules on a real project: the owner (no member
// row), members of every role, an organization member who inherits VIEWER, and users
// who must never be mentioned (the author, an outsider, a member of another project,
// a deactivated and a deleted member).
func TestResolveMentions(t *testing.T) {
	t.Parallel()
	ctx, tx := setup(t)
	u := map[string]uuid.UUID{}
	for _, n := range []string{"Olga Owner", "Alice Author", "Bob", "Ada Lovelace", "Émile Zola", "ZOË Ünal", "O'Brien",
		"J.R.R. Tolkien", "Carl", "Frank", "Jr.", "Twin", "Twin "} {
		u[n] = newUser(t, ctx, tx, n, "")
	}
	u["Dave"] = newUser(t, ctx, tx, "Dave", "deleted")
	u["Eve"] = newUser(t, ctx, tx, "Eve", "inactive")

	var org, project, other uuid.UUID
	require.NoError(t, tx.NewRaw("INSERT INTO organizations (name, slug) VALUES ('O', ?) RETURNING id",
		"o-"+strings.ToLower(uuid.NewString()[:8])).Scan(ctx, &org))
	key := "M" + strings.ToUpper(strings.ReplaceAll(uuid.NewString(), "-", "")[:7])
	require.NoError(t, tx.NewRaw("INSERT INTO projects (key, name, owner_id, org_id) VALUES (?, 'P', ?, ?) RETURNING id",
		key, u["Olga Owner"], org).Scan(ctx, &project))
	require.NoError(t, tx.NewRaw("INSERT INTO projects (key, name, owner_id) VALUES (?, 'Other', ?) RETURNING id",
		key[:7]+"X", u["Frank"]).Scan(ctx, &other))
	for name, role := range map[string]string{"Alice Author": "MEMBER", "Bob": "MEMBER", "Ada Lovelace": "VIEWER",
		"O'Brien": "ADMIN", "J.R.R. Tolkien": "MEMBER", "ZOË Ünal": "MEMBER", "Dave": "MEMBER", "Eve": "MEMBER",
		"Jr.": "MEMBER", "Twin": "MEMBER", "Twin ": "VIEWER"} {
		exec(t, ctx, tx, "INSERT INTO project_members (project_id, user_id, role) VALUES (?, ?, ?)", project, u[name], role)
	}
	exec(t, ctx, tx, "INSERT INTO project_members (project_id, user_id, role) VALUES (?, ?, 'MEMBER')", other, u["Carl"])
	exec(t, ctx, tx, "INSERT INTO organization_members (org_id, user_id, role) VALUES (?, ?, 'MEMBER')", org, u["Émile Zola"])

	for _, c := range []struct {
		name, body string
		want       []string
	}{
		{"plain", "hi @bob", []string{"Bob"}},
		{"case-insensitive, once", "@BOB and @Bob and again @bob", []string{"Bob"}},
		{"spaces as dots", "@ada.lovelace", []string{"Ada Lovelace"}},
		{"spaces as underscores", "@Ada_Lovelace", []string{"Ada Lovelace"}},
		{"spaces left out", "@ADALOVELACE", []string{"Ada Lovelace"}},
		{"first name only is no one", "@ada lovelace", nil},
		{"sentence end", "Thanks @bob.", []string{"Bob"}},
		{"several dots", "really, @ada.lovelace...", []string{"Ada Lovelace"}},
		{"comma and brackets", "(@bob), @ada.lovelace: done", []string{"Bob", "Ada Lovelace"}},
		{"apostrophe ends the name", "@bob's turn", []string{"Bob"}},
		{"order of first mention", "@ada.lovelace, then @bob, then @ada.lovelace", []string{"Ada Lovelace", "Bob"}},
		{"email is no mention", "write to bob@example.com or x@bob", nil},
		{"double at", "@@bob", []string{"Bob"}},
		{"bare at", "@ and @. and @_", nil},
		{"non-member", "@carl", nil},
		{"member of another project", "@frank", nil},
		{"deleted member", "@dave", nil},
		{"deactivated member", "@eve", nil},
		{"author never", "@alice.author and @bob", []string{"Bob"}},
		{"owner without member row", "@olga_owner", []string{"Olga Owner"}},
		{"organization member inherits", "@émile.zola", []string{"Émile Zola"}},
		{"unicode case folding", "@ÉMILE_ZOLA @zoë.ünal", []string{"Émile Zola", "ZOË Ünal"}},
		{"dropped characters", "@obrien", []string{"O'Brien"}},
		{"dots inside the name", "@j.r.r.tolkien @J.R.R._Tolkien", []string{"J.R.R. Tolkien"}},
		{"dots and more punctuation", "cc @Bob..!?", []string{"Bob"}},
		{"a name ending in a dot, with or without it", "@jr and @JR.", []string{"Jr."}},
		{"shared spelling mentions both", "@twin", []string{"Twin", "Twin "}},
		{"markup around", "<p>first</p><p>@bob</p>", []string{"Bob"}},
		{"code does not count", "<p>@ada.lovelace</p><pre>@bob</pre><code>@olga.owner</code>", []string{"Ada Lovelace"}},
		{"entities decoded", "&lt;@bob&gt;", []string{"Bob"}},
		{"link text counts, its URL does not", `<a href="https://example.com/@ada.lovelace">@bob</a>`, []string{"Bob"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := comment.ResolveMentions(ctx, tx, project, u["Alice Author"], comment.Sanitize(c.body))
			require.NoError(t, err)
			want := []uuid.UUID{}
			for _, n := range c.want {
				want = append(want, u[n])
			}
			if len(c.want) == 2 && c.want[0] == "Twin" {
				// Members sharing a spelling come in id order.
				slices.SortFunc(want, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			}
			require.Equal(t, want, got, "%q", c.body)
		})
	}

	// A system comment excludes no one.
	got, err := comment.ResolveMentions(ctx, tx, project, uuid.Nil, "@alice.author")
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{u["Alice Author"]}, got)
}
