package main

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/jobs"
)

// The docs test keeps README.md and docs/ in step with the code: a link, queue, metric,
// setting or OpenAPI fragment added or renamed without its documentation fails here.

// repoRoot is the repository, seen from this package's directory.
const repoRoot = "../.."

// markdownFiles are the documents a reader follows links through: README.md and docs/*.md.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return append([]string{filepath.Join(repoRoot, "README.md")}, files...)
}

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, rel))
	require.NoError(t, err)
	return string(b)
}

var (
	fence       = regexp.MustCompile("^\\s*(```|~~~)")
	heading     = regexp.MustCompile(`^(#{1,6})\s+(.*?)\s*#*\s*$`)
	inlineLink  = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpan    = regexp.MustCompile("`[^`]*`")
	linkInTitle = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	// docRef is a repository-relative reference to a document, in code comments, the
	// OpenAPI document, scripts and prose: docs/operations.md#metrics, README.md.
	docRef = regexp.MustCompile(`\b((?:docs/[a-z0-9-]+|README)\.md)(#[A-Za-z0-9_-]+)?`)
)

// proseLines are the lines of a Markdown document, those of fenced code blocks blank.
func proseLines(doc string) []string {
	lines := strings.Split(doc, "\n")
	inFence := false
	for i, line := range lines {
		if fence.MatchString(line) {
			inFence = !inFence
			lines[i] = ""
		} else if inFence {
			lines[i] = ""
		}
	}
	return lines
}

// anchors are the fragment ids GitHub gives a document's headings: the heading's text
// in lower case, punctuation dropped, spaces to hyphens, -1, -2 … for repeats. An
// <a id> is not one: GitHub renames it, and other renderers and checkers ignore it.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range proseLines(doc) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := linkInTitle.ReplaceAllString(m[2], "$1")
		text = strings.NewReplacer("`", "", "*", "").Replace(text)
		var id strings.Builder
		for _, r := range strings.ToLower(text) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
				id.WriteRune(r)
			case r == ' ':
				id.WriteRune('-')
			}
		}
		slug := id.String()
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out
}

// checkTarget reports what is wrong with a reference to path#fragment, "" when it
// resolves: the file (or directory) exists, and a fragment of a Markdown file is one of
// its anchors.
func checkTarget(path, fragment string, cache map[string]map[string]bool) string {
	info, err := os.Stat(path)
	if err != nil {
		return "no such file"
	}
	if fragment == "" {
		return ""
	}
	if info.IsDir() || !strings.HasSuffix(path, ".md") {
		return "a fragment of a file that is not Markdown"
	}
	ids, ok := cache[path]
	if !ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return err.Error()
		}
		ids = anchors(string(b))
		cache[path] = ids
	}
	if !ids[fragment] {
		return "no heading or anchor #" + fragment
	}
	return ""
}

// TestDocLinksResolve: every relative link of README.md and docs/*.md reaches a file,
// and its #fragment a heading there (GitHub's anchor rules); every reference to a
// document in the code, the OpenAPI fragments, the scripts and the documents' prose
// (`docs/operations.md#metrics` in a comment) does too.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	cache := map[string]map[string]bool{}
	var broken []string
	checked := 0
	for _, file := range markdownFiles(t) {
		b, err := os.ReadFile(file)
		require.NoError(t, err)
		for n, line := range proseLines(string(b)) {
			for _, m := range inlineLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "/") {
					continue
				}
				path, fragment, _ := strings.Cut(target, "#")
				resolved := file
				if path != "" {
					resolved = filepath.Join(filepath.Dir(file), path)
				}
				checked++
				if why := checkTarget(resolved, fragment, cache); why != "" {
					broken = append(broken, rel(file)+":"+strconv.Itoa(n+1)+": ("+target+"): "+why)
				}
			}
		}
	}
	require.Greater(t, checked, 20, "the link scan found the documents' links")

	refs := 0
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".data", "node_modules", "bin", "data":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".yaml", ".yml", ".sh", ".json":
		default:
			if d.Name() != "Makefile" && d.Name() != "Dockerfile" {
				return nil
			}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range docRef.FindAllStringSubmatch(string(b), -1) {
			refs++
			if why := checkTarget(filepath.Join(repoRoot, m[1]), strings.TrimPrefix(m[2], "#"), cache); why != "" {
				broken = append(broken, rel(path)+": "+m[0]+": "+why)
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, refs, 50, "the reference scan found the code's references")
	require.Empty(t, dedupe(broken), "links and references that point nowhere")
}

// TestDocsNameEveryQueue: docs/operations.md and docs/design.md name every queue a
// worker serves.
func TestDocsNameEveryQueue(t *testing.T) {
	t.Parallel()
	require.Len(t, jobs.Queues, 10, "update this count and the docs together")
	for _, doc := range []string{"docs/operations.md", "docs/design.md"} {
		text := readDoc(t, doc)
		var missing []string
		for _, q := range jobs.Queues {
			if !strings.Contains(text, "`"+q+"`") {
				missing = append(missing, q)
			}
		}
		require.Empty(t, missing, "queues %s does not name", doc)
	}
}

// registeredNames are the metric names registered on reg, whether or not anything has
// been observed yet (a vector with no series is absent from Gather). The registry keeps
// them in an unexported map; reading its keys needs no unsafe access.
func registeredNames(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	dims := reflect.ValueOf(reg).Elem().FieldByName("dimHashesByName")
	require.True(t, dims.IsValid() && dims.Kind() == reflect.Map,
		"prometheus.Registry no longer has dimHashesByName: list its metrics another way")
	var names []string
	for _, k := range dims.MapKeys() {
		names = append(names, k.String())
	}
	sort.Strings(names)
	return names
}

// TestDocsNameEveryMetric: docs/operations.md#metrics names every metric the processes
// register, read from the registries cmd builds for `api` and for `worker` (`all` holds
// both): the API's and the workers' own collectors and the shared ones, including every
// vector nothing has observed yet. Go's runtime and process collectors are covered by
// their `go_*` and `process_*` lines.
func TestDocsNameEveryMetric(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg, err := loadConfig(ctx, envconfig.MapLookuper(map[string]string{"TW_DATABASE_URL": cloneDatabase(t),
		"TW_JWT_SECRET": strings.Repeat("docs-test-", 4), "TW_ATTACHMENTS_DIR": t.TempDir(), "TW_LOG_LEVEL": "error"}))
	require.NoError(t, err)

	apiApp, err := newApp(ctx, cfg, false)
	require.NoError(t, err)
	defer apiApp.close()
	_, err = apiApp.server(context.Background())
	require.NoError(t, err)
	workerApp, err := newApp(ctx, cfg, true)
	require.NoError(t, err)
	defer workerApp.close()
	_, err = workerApp.workerClient(context.Background())
	require.NoError(t, err)

	names := append(registeredNames(t, apiApp.registry), registeredNames(t, workerApp.registry)...)
	slices.Sort(names)
	names = slices.Compact(names)
	for _, want := range []string{"taskweave_http_requests_total", "taskweave_river_job_failures_total",
		"taskweave_automation_limited_total", "taskweave_river_jobs"} {
		require.Contains(t, names, want, "the registries hold the API's, the workers' and the shared collectors")
	}

	text := readDoc(t, "docs/operations.md")
	var missing []string
	for _, name := range names {
		documented := strings.Contains(text, "`"+name+"`")
		for _, family := range []string{"go_", "process_"} {
			if strings.HasPrefix(name, family) {
				documented = strings.Contains(text, "`"+family+"*`")
			}
		}
		if !documented {
			missing = append(missing, name)
		}
	}
	require.Empty(t, missing, "metrics registered but not in docs/operations.md#metrics")
}

var (
	// goVariable and makeVariable find TW_ variables the code reads outside the config struct: tests,
	// the bench and helpers read them with os.Getenv, `make test` exports them.
	goVariable   = regexp.MustCompile(`(?:Getenv|LookupEnv|Lookup)\("(TW_[A-Z0-9_]+)"\)`)
	makeVariable = regexp.MustCompile(`\b(TW_[A-Z0-9_]+)=`)
)

// TestDocsNameEverySetting: docs/configuration.md names every TW_ variable of the
// config struct (its env tags) and every one the tests, the bench or `make test` read.
func TestDocsNameEverySetting(t *testing.T) {
	t.Parallel()
	var names []string
	typ := reflect.TypeOf(Config{})
	for i := range typ.NumField() {
		tag, ok := typ.Field(i).Tag.Lookup("env")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		names = append(names, name)
	}
	require.Contains(t, names, "TW_JWT_SECRET")
	require.Contains(t, names, "TW_CPU_PROFILE")

	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			if d != nil && d.IsDir() && (d.Name() == ".git" || d.Name() == ".data" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return err
		}
		var re *regexp.Regexp
		switch {
		case strings.HasSuffix(path, ".go"):
			re = goVariable
		case d.Name() == "Makefile":
			re = makeVariable
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
		}
		return nil
	})
	require.NoError(t, err)
	require.Contains(t, names, "TW_TEST_DATABASE_URL")
	require.Contains(t, names, "TW_REQUIRE_BROWSER")

	text := readDoc(t, "docs/configuration.md")
	var missing []string
	for _, name := range names {
		if !strings.Contains(text, "`"+name+"`") {
			missing = append(missing, name)
		}
	}
	require.Empty(t, dedupe(missing), "TW_ variables docs/configuration.md does not name")
}

// TestDocsNameEveryOpenAPIFragment: docs/api-conventions.md's table names every
// fragment the OpenAPI document is merged from.
func TestDocsNameEveryOpenAPIFragment(t *testing.T) {
	t.Parallel()
	var fragments []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "api"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(path)) == "openapi" && filepath.Ext(path) == ".yaml" {
			fragments = append(fragments, rel(path))
		}
		return err
	})
	require.NoError(t, err)
	require.Greater(t, len(fragments), 10)
	text := readDoc(t, "docs/api-conventions.md")
	var missing []string
	for _, f := range fragments {
		if !strings.Contains(text, "\n| `"+f+"` |") {
			missing = append(missing, f)
		}
	}
	require.Empty(t, missing, "OpenAPI fragments docs/api-conventions.md's fragment table does not list")
}

// rel is path relative to the repository, with forward slashes.
func rel(path string) string {
	r, err := filepath.Rel(repoRoot, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

func dedupe(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}
