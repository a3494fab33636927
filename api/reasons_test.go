package api_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/samber/lo"
	"github.com/stretchr/testify/require"
)

// reasonInCode matches where the API's Go code gives an error its reason: an error
// table's Reason, core.BadRequest, Forbidden and NotFound, core.NewError's third
// argument and an assignment to an error's Reason.
var reasonInCode = regexp.MustCompile(`Reason: *"([A-Z][A-Z0-9_]+)"|(?:BadRequest|Forbidden|NotFound)\("([A-Z][A-Z0-9_]+)"|NewError\([^,()]+, *"[A-Z_]+", *"([A-Z][A-Z0-9_]+)"|Reason *= *"([A-Z][A-Z0-9_]+)"`)

// codeReasons are the reasons the Go code under api/ (tests left out) can answer.
func codeReasons(t *testing.T) []string {
	t.Helper()
	set := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") ||
			strings.HasPrefix(path, "apitest") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range reasonInCode.FindAllStringSubmatch(string(src), -1) {
			for _, g := range m[1:] {
				if g != "" {
					set[g] = true
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return sorted(lo.Keys(set))
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

// TestReasonsDocumented: the reasons in the code, the table of docs/api-conventions.md
// and the list in the OpenAPI document's Problem.reason are the same set.
func TestReasonsDocumented(t *testing.T) {
	t.Parallel()
	inCode := codeReasons(t)
	require.Greater(t, len(inCode), 100, "the scan found too few reasons to be looking at the code")
	require.Contains(t, inCode, "STATUS_NOT_IN_WORKFLOW")
	require.Contains(t, inCode, "PROJECT_NOT_FOUND")

	raw, err := os.ReadFile(filepath.Join("..", "docs", "api-conventions.md"))
	require.NoError(t, err)
	section := string(raw)
	start := strings.Index(section, "### Reasons")
	require.GreaterOrEqual(t, start, 0, "docs/api-conventions.md has a Reasons section")
	section = section[start:]
	if end := strings.Index(section[1:], "\n#"); end >= 0 {
		section = section[:end+1]
	}
	var inDocs []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z][A-Z0-9_]+)` \\| [0-9]{3}").FindAllStringSubmatch(section, -1) {
		inDocs = append(inDocs, m[1])
	}

	doc := loadOpenAPI(t)
	desc := doc.Components.Schemas["Problem"].Value.Properties["reason"].Value.Description
	_, list, ok := strings.Cut(desc, "status and meaning):")
	require.True(t, ok, "Problem.reason lists the reasons")
	var inOpenAPI []string
	for _, r := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == '.' || r == ' ' || r == '\n' }) {
		inOpenAPI = append(inOpenAPI, r)
	}

	missing, extra := lo.Difference(inCode, sorted(inDocs))
	require.Empty(t, missing, "reasons the code answers that docs/api-conventions.md#reasons lacks")
	require.Empty(t, extra, "reasons docs/api-conventions.md#reasons lists that the code never answers")
	missing, extra = lo.Difference(inCode, sorted(inOpenAPI))
	require.Empty(t, missing, "reasons the code answers that the OpenAPI Problem.reason lacks")
	require.Empty(t, extra, "reasons the OpenAPI Problem.reason lists that the code never answers")
}
