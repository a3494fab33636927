package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
)

// oapiTypeName is the Go type name oapi-codegen gives a component: its name with the
// first letter upper-cased and every character that is not a letter or digit dropped,
// the letter after it upper-cased.
func oapiTypeName(name string) string {
	var b strings.Builder
	up := true
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
			if up {
				r = []rune(strings.ToUpper(string(r)))[0]
			}
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}

// TestOpenAPIComponentNamesForGenerators keeps the document generator-friendly: code
// generators (oapi-codegen, openapi-generator) give every component of every section a
// type of the component's name, and name their own per-operation types
// <OperationId>Response, <OperationId>Params, <OperationId>JSONRequestBody. A schema and
// a parameter called CommentPage stopped oapi-codegen ("duplicate typename"), and a
// schema SwitchOrgResponse met the wrapper of operation switchOrg.
func TestOpenAPIComponentNamesForGenerators(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	c := doc.Components
	sections := map[string][]string{
		"schemas": slices.Collect(maps.Keys(c.Schemas)), "parameters": slices.Collect(maps.Keys(c.Parameters)),
		"responses": slices.Collect(maps.Keys(c.Responses)), "requestBodies": slices.Collect(maps.Keys(c.RequestBodies)),
		"headers": slices.Collect(maps.Keys(c.Headers)),
	}

	reserved := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.NotEmpty(t, op.OperationID, "%s %s has no operationId", method, path)
			id := oapiTypeName(op.OperationID)
			for _, suffix := range []string{"Response", "Params", "JSONRequestBody", "JSONBody", "RequestBody", "RequestObject", "ResponseObject"} {
				reserved[id+suffix] = op.OperationID
			}
		}
	}
	// Generators' own suffixes for the types they derive: no component may end with one.
	suffix := regexp.MustCompile(`(Params|RequestBody|JSONBody|RequestObject|ResponseObject)$`)

	seen := map[string]string{}
	var problems []string
	for section, list := range sections {
		for _, n := range list {
			typ := oapiTypeName(n)
			where := section + "/" + n
			if other, ok := seen[typ]; ok {
				problems = append(problems, where+" and "+other+" both become type "+typ)
			}
			seen[typ] = where
			if op, ok := reserved[typ]; ok {
				problems = append(problems, where+" is the name generators give a type of operation "+op)
			}
			if suffix.MatchString(typ) {
				problems = append(problems, where+" ends with a suffix generators reserve for their own types")
			}
		}
	}
	sort.Strings(problems)
	require.Empty(t, problems)
}

// goBinary is the go command that runs this test.
func goBinary(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to build the generated client")
	return p
}

// runIn runs a command in dir and returns its stdout; a failure shows stderr.
func runIn(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %s\nstdout: %s\nstderr: %s", name, strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.Bytes()
}

// copyFiles copies the named files of src into dst.
func copyFiles(t *testing.T, src, dst string, names ...string) {
	t.Helper()
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(src, n))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, n), raw, 0o644))
	}
}

// TestOpenAPIGoClient generates the Go client with oapi-codegen v2.8.2 from the served
// document, builds the script api/testdata/goclient/main.go against it and runs the
// script against a real server: register, create a project, create two issues, move
// one to IN_PROGRESS, list with a status and priority filter, read a page of activity.
// The generator is a tool of the script's own module (api/testdata/goclient/go.mod), so
// Taskweave's go.mod gains nothing and, once the module cache holds it, nothing is
// downloaded.
func TestOpenAPIGoClient(t *testing.T) {
	t.Parallel()
	goCmd := goBinary(t)
	src, err := filepath.Abs(filepath.Join("testdata", "goclient"))
	require.NoError(t, err)
	dir := t.TempDir()
	copyFiles(t, src, dir, "go.mod", "go.sum", "main.go")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openapi.yaml"), mustDoc(t), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The module stands alone: no workspace, its go.sum as committed, this toolchain.
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false", "GOTOOLCHAIN=local"}
	runIn(t, ctx, dir, env, goCmd, "tool", "oapi-codegen", "-generate", "types,client", "-package", "twclient",
		"-o", filepath.Join("twclient", "client.gen.go"), "openapi.yaml")
	runIn(t, ctx, dir, env, goCmd, "build", "-o", "journey", ".")

	h := apitest.Shared(t)
	base := atListen(t, h)
	key := apitest.UniqueProjectKey()
	out := runIn(t, ctx, dir, nil, filepath.Join(dir, "journey"), base, key)

	var res struct {
		UserEmail      string   `json:"userEmail"`
		ProjectID      string   `json:"projectId"`
		MovedIssue     string   `json:"movedIssue"`
		OtherIssue     string   `json:"otherIssue"`
		InProgressID   string   `json:"inProgressId"`
		Listed         []string `json:"listed"`
		ListedTotal    int64    `json:"listedTotal"`
		ActivityTypes  []string `json:"activityTypes"`
		ActivityTotal  int64    `json:"activityTotal"`
		StatusNewValue string   `json:"statusNewValue"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "journey printed %s", out)
	require.Equal(t, key+"-1", res.MovedIssue)
	require.Equal(t, key+"-2", res.OtherIssue)
	// The filter (status IN_PROGRESS and priority HIGH) leaves out the other HIGH issue.
	require.Equal(t, []string{res.MovedIssue}, res.Listed)
	require.EqualValues(t, 1, res.ListedTotal)
	require.Equal(t, []string{"STATUS_CHANGED"}, res.ActivityTypes)
	require.EqualValues(t, 1, res.ActivityTotal)

	// The database agrees with what the client read.
	var owner, status, statusName, priority string
	require.NoError(t, h.DB.Pool.QueryRow(ctx, `SELECT u.email, i.status_id::text, s.name, i.priority
		FROM issues AS i JOIN projects AS p ON p.id = i.project_id JOIN users AS u ON u.id = p.owner_id
		JOIN workflow_statuses AS s ON s.id = i.status_id WHERE i.key = $1`, res.MovedIssue).
		Scan(&owner, &status, &statusName, &priority))
	require.Equal(t, strings.ToLower(res.UserEmail), owner)
	require.Equal(t, res.InProgressID, status)
	require.Equal(t, statusName, res.StatusNewValue)
	require.Equal(t, "HIGH", priority)
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM issue_activities AS a JOIN issues AS i ON i.id = a.issue_id
		WHERE i.key = $1 AND a.type = 'STATUS_CHANGED' AND a.new_value = $2`, res.MovedIssue, statusName))
	require.Equal(t, 1, h.Count(`SELECT count(*) FROM projects WHERE id = $1 AND key = $2`, uuid.MustParse(res.ProjectID), key))
}

// TestOpenAPITypeScript generates TypeScript types from the served document with
// openapi-typescript and type-checks them, with api/testdata/openapi-ts/check.ts (a
// script using them for the same journey as TestOpenAPIGoClient), under tsc --strict.
// scripts/node-deps.sh installs both; without them the test skips, unless
// TW_REQUIRE_NODE=1 (make test).
func TestOpenAPITypeScript(t *testing.T) {
	t.Parallel()
	src, err := filepath.Abs(filepath.Join("testdata", "openapi-ts"))
	require.NoError(t, err)
	node, nodeErr := exec.LookPath("node")
	generator := filepath.Join(src, "node_modules", "openapi-typescript", "bin", "cli.js")
	tsc := filepath.Join(src, "node_modules", "typescript", "bin", "tsc")
	_, genErr := os.Stat(generator)
	_, tscErr := os.Stat(tsc)
	if nodeErr != nil || genErr != nil || tscErr != nil {
		msg := "node, openapi-typescript or typescript is missing: run scripts/node-deps.sh"
		if os.Getenv("TW_REQUIRE_NODE") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	copyFiles(t, src, dir, "check.ts")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "openapi.yaml"), mustDoc(t), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	runIn(t, ctx, dir, nil, node, generator, "openapi.yaml", "-o", "schema.d.ts")
	raw, err := os.ReadFile(filepath.Join(dir, "schema.d.ts"))
	require.NoError(t, err)
	require.Contains(t, string(raw), `"/api/v1/projects/{key}/issues/{issueKey}/activity"`)
	runIn(t, ctx, dir, nil, node, tsc, "--strict", "--noEmit", "--target", "es2022", "--module", "esnext",
		"--moduleResolution", "bundler", "--lib", "es2022,dom", "check.ts", "schema.d.ts")
}
