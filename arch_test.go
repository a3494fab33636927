package taskweave_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is this repository's module path.
const module = "github.com/taskweave/taskweave"

// importEdge is one import of one Go file: from is the file's package directory relative
// to the module root ("domain/issue"), to the imported path, with the module prefix cut
// for our own packages (own; "store") and whole for the rest ("github.com/gofiber/fiber/v2").
type importEdge struct {
	from, file, to string
	own, test      bool
}

// newImportEdge is the import of path by file (slash-separated, relative to the module
// root).
func newImportEdge(file, path string) importEdge {
	e := importEdge{from: pathpkg.Dir(file), file: file, to: path, test: strings.HasSuffix(file, "_test.go")}
	if path == module {
		e.to, e.own = ".", true
	} else if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		e.to, e.own = rest, true
	}
	return e
}

// archRule is one clause of the import direction cmd → api, workers → domain → store,
// jobs (README.md and docs/design.md describe it).
type archRule struct {
	name string
	// broken tells whether e breaks the rule.
	broken func(e importEdge) bool
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

func underAny(path string, dirs ...string) bool {
	for _, d := range dirs {
		if under(path, d) {
			return true
		}
	}
	return false
}

// webhookClient is the one domain file allowed fasthttp: the webhook delivery client is
// fasthttp's, which costs less CPU per request than net/http's
// (docs/performance.md#sending). It is the outbound client only; no server type
// (fasthttp.RequestCtx, Fiber) reaches domain.
const webhookClient = "domain/webhook/sender.go"

var archRules = []archRule{
	{"domain imports no api, workers, cmd, Fiber or fasthttp", func(e importEdge) bool {
		if e.file == webhookClient && e.to == "github.com/valyala/fasthttp" {
			return false
		}
		return under(e.from, "domain") && (e.own && underAny(e.to, "api", "workers", "cmd") ||
			!e.own && underAny(e.to, "github.com/gofiber", "github.com/valyala/fasthttp", "github.com/fasthttp"))
	}},
	// storetest builds the migrated template database, so it may read migrations/.
	{"store imports nothing of ours but store (storetest: and migrations)", func(e importEdge) bool {
		if !under(e.from, "store") || !e.own || under(e.to, "store") {
			return false
		}
		return !(under(e.from, "store/storetest") && under(e.to, "migrations"))
	}},
	{"jobs imports nothing of ours", func(e importEdge) bool {
		return under(e.from, "jobs") && e.own && !under(e.to, "jobs")
	}},
	// api/apitest is the HTTP test harness: it starts workers, and only tests import it.
	{"api imports workers only in tests", func(e importEdge) bool {
		return under(e.from, "api") && e.own && under(e.to, "workers") && !e.test && !under(e.from, "api/apitest")
	}},
	{"api/apitest is imported only by tests", func(e importEdge) bool {
		return e.own && under(e.to, "api/apitest") && !e.test
	}},
	{"workers import no api", func(e importEdge) bool {
		return under(e.from, "workers") && e.own && under(e.to, "api")
	}},
	{"nothing imports cmd", func(e importEdge) bool {
		return e.own && under(e.to, "cmd")
	}},
	// The API is split by area (api/account, api/project, api/work, ...) over api/core;
	// package api wires the areas into one server. An area reaches another only through
	// core or domain, so each can be read, and changed, alone.
	{"an api area imports no other area and not api (only api/core of the api)", func(e importEdge) bool {
		area := apiArea(e.from)
		if area == "" || !e.own || !under(e.to, "api") || under(e.to, area) || under(e.to, "api/core") {
			return false
		}
		// An area's tests build the whole server (api) with the harness (api/apitest).
		return !(e.test && (e.to == "api" || underAny(e.to, "api/apitest", "api/stomp")))
	}},
	{"api/core imports nothing of the api but itself", func(e importEdge) bool {
		return under(e.from, "api/core") && e.own && under(e.to, "api") && !under(e.to, "api/core")
	}},
}

// apiShared are the packages under api/ that are no area: the core the areas share, the
// HTTP test harness and the STOMP endpoint the server mounts.
var apiShared = []string{"api/core", "api/apitest", "api/stomp"}

// apiArea is the area of the API dir belongs to ("api/project" for api/project and
// below), or "" for api itself, the shared packages and everything outside api/.
func apiArea(dir string) string {
	rest, ok := strings.CutPrefix(dir, "api/")
	if !ok || underAny(dir, apiShared...) {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	return "api/" + first
}

// archViolations lists every edge that breaks a rule, as "file imports X: rule".
func archViolations(edges []importEdge) []string {
	var out []string
	for _, e := range edges {
		for _, r := range archRules {
			if r.broken(e) {
				out = append(out, e.file+" imports "+e.to+": "+r.name)
			}
		}
	}
	return out
}

// moduleImports parses the imports of every Go file of the module under root.
func moduleImports(t *testing.T, root string) []importEdge {
	t.Helper()
	var edges []importEdge
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				name == "testdata" || name == "vendor" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			to, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			edges = append(edges, newImportEdge(filepath.ToSlash(rel), to))
		}
		return nil
	})
	require.NoError(t, err)
	return edges
}

// TestArchitecture fails on any import against the direction cmd → api, workers →
// domain → store, jobs.
func TestArchitecture(t *testing.T) {
	t.Parallel()
	edges := moduleImports(t, ".")
	// The walk must have seen every layer, or a moved tree would pass unchecked.
	seen := map[string]bool{}
	for _, e := range edges {
		first, _, _ := strings.Cut(e.from, "/")
		seen[first] = true
	}
	for _, layer := range []string{"cmd", "api", "workers", "domain", "store", "jobs"} {
		require.True(t, seen[layer], "no Go file with imports found under %s/", layer)
	}
	require.Empty(t, archViolations(edges))
}

// TestArchitectureRules proves the checker sees each kind of violation in a synthetic
// import graph, and lets the allowed edges through.
func TestArchitectureRules(t *testing.T) {
	t.Parallel()
	// edge is file's import of path, of our package path when it names one of our trees.
	edge := func(file, path string) importEdge {
		if underAny(path, "api", "workers", "domain", "store", "jobs", "cmd", "migrations") {
			path = module + "/" + path
		}
		return newImportEdge(file, path)
	}
	for _, c := range []struct {
		name string
		edge importEdge
		want []string // the rules broken; none when the edge is allowed
	}{
		{"domain → api", edge("domain/issue/issue.go", "api"), []string{archRules[0].name}},
		{"domain test → workers", edge("domain/issue/issue_test.go", "workers"), []string{archRules[0].name}},
		{"domain → cmd", edge("domain/audit/audit.go", "cmd/taskweave"), []string{archRules[0].name, archRules[6].name}},
		{"domain → Fiber", edge("domain/auth/auth.go", "github.com/gofiber/fiber/v2"), []string{archRules[0].name}},
		{"domain → fasthttp", edge("domain/notify/mailer.go", "github.com/valyala/fasthttp"), []string{archRules[0].name}},
		{"webhook client → fasthttp", edge(webhookClient, "github.com/valyala/fasthttp"), nil},
		{"webhook client → Fiber", edge(webhookClient, "github.com/gofiber/fiber/v2"), []string{archRules[0].name}},
		{"other webhook file → fasthttp", edge("domain/webhook/consumer.go", "github.com/valyala/fasthttp"), []string{archRules[0].name}},
		{"domain → fasthttp websocket", edge("domain/realtime/hub.go", "github.com/fasthttp/websocket"), []string{archRules[0].name}},
		{"domain → store", edge("domain/issue/issue.go", "store"), nil},
		{"domain → jobs", edge("domain/issue/issue.go", "jobs"), nil},
		{"domain → domain", edge("domain/issue/issue.go", "domain/audit"), nil},
		{"store → domain", edge("store/models.go", "domain/issue"), []string{archRules[1].name}},
		{"store → jobs", edge("store/db.go", "jobs"), []string{archRules[1].name}},
		{"store → migrations", edge("store/db.go", "migrations"), []string{archRules[1].name}},
		{"storetest → migrations", edge("store/storetest/storetest.go", "migrations"), nil},
		{"storetest → store", edge("store/storetest/storetest.go", "store"), nil},
		{"store test → storetest", edge("store/db_test.go", "store/storetest"), nil},
		{"storetest → domain", edge("store/storetest/storetest.go", "domain/event"), []string{archRules[1].name}},
		{"store → bun", edge("store/db.go", "github.com/uptrace/bun"), nil},
		{"jobs → store", edge("jobs/jobs.go", "store"), []string{archRules[2].name}},
		{"jobs → domain", edge("jobs/webhook.go", "domain/webhook"), []string{archRules[2].name}},
		{"store → time", edge("store/models.go", "time"), nil},
		{"jobs → database/sql", edge("jobs/inserter.go", "database/sql"), nil},
		{"jobs → River", edge("jobs/jobs.go", "github.com/riverqueue/river"), nil},
		{"api → workers", edge("api/server.go", "workers"), []string{archRules[3].name}},
		{"api/stomp → workers", edge("api/stomp/stomp.go", "workers"), []string{archRules[3].name}},
		{"api test → workers", edge("api/jobs_test.go", "workers"), nil},
		{"apitest → workers", edge("api/apitest/apitest.go", "workers"), nil},
		{"api → apitest", edge("api/server.go", "api/apitest"), []string{archRules[4].name}},
		{"cmd → apitest", edge("cmd/taskweave/main.go", "api/apitest"), []string{archRules[4].name}},
		{"workers → api", edge("workers/workers.go", "api"), []string{archRules[5].name}},
		{"workers test → api", edge("workers/rescue_test.go", "api"), []string{archRules[5].name}},
		{"workers → domain", edge("workers/workers.go", "domain/webhook"), nil},
		{"api → cmd", edge("api/server.go", "cmd/taskweave"), []string{archRules[6].name}},
		{"bench → cmd", edge("bench/main.go", "cmd/taskweave"), []string{archRules[6].name}},
		{"cmd → api, workers", edge("cmd/taskweave/app.go", "workers"), nil},
		{"api → area", edge("api/server.go", "api/project"), nil},
		{"area → core", edge("api/project/members.go", "api/core"), nil},
		{"area → domain", edge("api/project/members.go", "domain/project"), nil},
		{"area → its own package", edge("api/admin/ops.go", "api/admin"), nil},
		{"area → area", edge("api/work/issues.go", "api/project"), []string{archRules[7].name}},
		{"area → api", edge("api/work/issues.go", "api"), []string{archRules[7].name}},
		{"area → apitest", edge("api/work/issues.go", "api/apitest"), []string{archRules[4].name, archRules[7].name}},
		{"area test → api, apitest", edge("api/work/issues_test.go", "api"), nil},
		{"area test → apitest", edge("api/work/issues_test.go", "api/apitest"), nil},
		{"area test → area", edge("api/work/issues_test.go", "api/project"), []string{archRules[7].name}},
		{"core → area", edge("api/core/errors.go", "api/work"), []string{archRules[8].name}},
		{"core → api", edge("api/core/errors.go", "api"), []string{archRules[8].name}},
		{"coretest → core", edge("api/core/coretest/coretest.go", "api/core"), nil},
		{"stomp → core", edge("api/stomp/hub.go", "api/core"), nil},
	} {
		var want []string
		for _, rule := range c.want {
			want = append(want, c.edge.file+" imports "+c.edge.to+": "+rule)
		}
		require.Equal(t, want, archViolations([]importEdge{c.edge}), c.name)
	}
}

// TestArchitectureFindsViolationsOnDisk runs the walk over a small tree with a bad import,
// so the parsing half of the check is proven too.
func TestArchitectureFindsViolationsOnDisk(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
	}
	write("domain/issue/issue.go", "package issue\n\nimport (\n\t\"fmt\"\n\n\t\""+module+"/api\"\n)\n")
	write("api/server.go", "package api\n\nimport \""+module+"/workers\"\n")
	write("api/server_test.go", "package api_test\n\nimport \""+module+"/workers\"\n")
	write("testdata/x/x.go", "package x\n\nimport \""+module+"/cmd/taskweave\"\n")
	got := archViolations(moduleImports(t, root))
	require.Equal(t, []string{
		"api/server.go imports workers: " + archRules[3].name,
		"domain/issue/issue.go imports api: " + archRules[0].name,
	}, got)
}
