package apitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/taskweave/taskweave/api"
)

// The served OpenAPI document is the contract every HTTP test checks its answers
// against: Harness.Do hands each exchange to CheckOpenAPI.

// contract is the merged document and a router over it, built once per test binary.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	raw, err := api.OpenAPIDocument()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	// The document's one server is "/", relative; without servers the router matches
	// the path alone, whatever the host.
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	return &contract{doc: doc, router: router}, nil
})

// OpenAPIDoc is the parsed document the harness validates against.
func OpenAPIDoc() (*openapi3.T, error) {
	c, err := loadContract()
	if err != nil {
		return nil, err
	}
	return c.doc, nil
}

func init() {
	// The ops pages and River UI's entry point answer HTML; kin-openapi has no decoder
	// for it, and their schema is a string.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// notAPI are paths, by prefix, that are never checked: not API answers at all.
var notAPI = []struct{ prefix, why string }{
	// Swagger UI's own page and bundled assets (the swgui handler). The document
	// describes the redirects /swagger-ui and /swagger-ui.html; the router would take
	// "/swagger-ui/" for the first.
	{"/swagger-ui/", "Swagger UI assets"},
}

// undocumented are paths, by prefix, whose answers are not the document's to describe
// when no documented operation matches them. Anything else that no operation matches
// may only answer 4xx (an unknown path or method); a 2xx or 3xx there is an undocumented
// answer.
var undocumented = []struct{ prefix, why string }{
	// River UI's own pages, assets and read API (riverui's handler): the document
	// describes only the entry point /admin/river/ and the calls Taskweave answers.
	{"/admin/river/", "River UI internals"},
}

// lenientRequests are requests the document rejects that the server accepts on purpose
// and tests send on purpose: tolerance of broken clients, not part of the contract. For
// them only the answer is checked, not that a request the document rejects was refused.
var lenientRequests = []struct {
	operation string
	applies   func(*http.Request) bool
	why       string
}{
	// An unknown project answers 200 whatever the body, so the endpoint tells nobody
	// which projects exist (55-integrations.yaml); tests send "{" there.
	{"incomingGitHub", func(*http.Request) bool { return true }, "unknown project: 200 whatever the body"},
	{"incomingGitLab", func(*http.Request) bool { return true }, "unknown project: 200 whatever the body"},
	// An unencoded '+' in an instant's offset arrives as a space and is read as '+'.
	{"listAuditEvents", func(r *http.Request) bool {
		return strings.Contains(r.URL.Query().Get("from")+r.URL.Query().Get("to"), " ")
	},
		"unencoded '+' in from/to"},
	{"listProjectAuditEvents", func(r *http.Request) bool {
		return strings.Contains(r.URL.Query().Get("from")+r.URL.Query().Get("to"), " ")
	},
		"unencoded '+' in from/to"},
}

func lenient(op string, r *http.Request) bool {
	for _, l := range lenientRequests {
		if l.operation == op && l.applies(r) {
			return true
		}
	}
	return false
}

// Exchange is one request and its answer, as CheckOpenAPI sees them.
type Exchange struct {
	Method string
	// Target is the request path with its query.
	Target        string
	RequestHeader http.Header
	RequestBody   []byte
	Status        int
	Header        http.Header
	Body          []byte
}

// CheckOpenAPI checks one exchange against the document: the answer's status must be
// declared for the operation, its Content-Type declared for that status and its body
// match the schema (a status declared without content must come without a body); a
// request the document rejects must not be answered 2xx. It returns nil for paths
// listed in notValidated and for unknown paths answered 4xx, and records what it saw
// for ReportOpenAPICoverage.
func CheckOpenAPI(ex Exchange) error {
	c, err := loadContract()
	if err != nil {
		return fmt.Errorf("openapi: load the document: %w", err)
	}
	req, err := http.NewRequest(ex.Method, "http://localhost"+ex.Target, bytes.NewReader(ex.RequestBody))
	if err != nil {
		return fmt.Errorf("openapi: %s %s: %w", ex.Method, ex.Target, err)
	}
	req.Header = ex.RequestHeader.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	for _, na := range notAPI {
		if strings.HasPrefix(req.URL.Path, na.prefix) {
			cov.skip(na.why)
			return nil
		}
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		for _, nv := range undocumented {
			if strings.HasPrefix(req.URL.Path, nv.prefix) {
				cov.skip(nv.why)
				return nil
			}
		}
		if ex.Status >= 400 && ex.Status < 500 {
			cov.skip("unknown path or method answered " + strconv.Itoa(ex.Status))
			return nil
		}
		return fmt.Errorf("openapi: %s %s answered %d but no documented operation matches (%v)", ex.Method, req.URL.Path, ex.Status, err)
	}
	op := route.Operation.OperationID

	reqInput := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	var problems []string
	if ex.Status < 300 && !lenient(op, req) {
		if err := openapi3filter.ValidateRequest(context.Background(), reqInput); err != nil {
			problems = append(problems, "the server accepted a request the document rejects: "+oneLine(err))
		}
	}

	respInput := &openapi3filter.ResponseValidationInput{RequestValidationInput: reqInput, Status: ex.Status,
		Header: ex.Header, Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	respInput.SetBodyBytes(ex.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), respInput); err != nil {
		problems = append(problems, "answer: "+oneLine(err))
	} else if resp := route.Operation.Responses.Status(ex.Status); resp != nil && resp.Value != nil &&
		len(resp.Value.Content) == 0 && len(ex.Body) > 0 && ex.Method != http.MethodHead {
		problems = append(problems, fmt.Sprintf("answer: status %d is declared without a body, got %d bytes (%s)",
			ex.Status, len(ex.Body), ex.Header.Get("Content-Type")))
	}
	cov.saw(op, ex.Status)
	if len(problems) > 0 {
		return fmt.Errorf("openapi: %s %s (operation %s) answered %d %s: %s\nbody: %s", ex.Method, ex.Target, op,
			ex.Status, ex.Header.Get("Content-Type"), strings.Join(problems, "; "), clip(ex.Body))
	}
	return nil
}

func oneLine(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		parts := make([]string, 0, len(me))
		for _, e := range me {
			parts = append(parts, oneLine(e))
		}
		return strings.Join(parts, " | ")
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// coverage counts what CheckOpenAPI saw in this test binary.
type coverage struct {
	mu        sync.Mutex
	validated int
	skipped   map[string]int
	seen      map[string]int // "operationId status"
}

var cov = coverage{skipped: map[string]int{}, seen: map[string]int{}}

func (c *coverage) skip(why string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.skipped[why]++
}

func (c *coverage) saw(op string, status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.validated++
	c.seen[op+" "+strconv.Itoa(status)]++
}

// OpenAPICoverage summarizes the answers checked so far: a one-line headline, and the
// full text naming the operations and declared (operation, status) pairs never seen.
func OpenAPICoverage() (headline, full string) {
	c, err := loadContract()
	if err != nil {
		return "openapi coverage: " + err.Error(), ""
	}
	cov.mu.Lock()
	defer cov.mu.Unlock()
	seenOps := map[string]bool{}
	for k := range cov.seen {
		seenOps[strings.Fields(k)[0]] = true
	}
	ops, declared := 0, 0
	var unseen, unseenOps []string
	for path, item := range c.doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops++
			if !seenOps[op.OperationID] {
				unseenOps = append(unseenOps, op.OperationID+" ("+method+" "+path+")")
			}
			for status := range op.Responses.Map() {
				declared++
				if cov.seen[op.OperationID+" "+status] == 0 {
					unseen = append(unseen, op.OperationID+" "+status)
				}
			}
		}
	}
	sort.Strings(unseen)
	sort.Strings(unseenOps)
	skipped := 0
	var reasons []string
	for why, n := range cov.skipped {
		skipped += n
		reasons = append(reasons, fmt.Sprintf("  %6d  %s\n", n, why))
	}
	sort.Strings(reasons)
	headline = fmt.Sprintf("%d responses validated (%d not: not API paths or unknown paths answered 4xx); "+
		"%d of %d operations and %d of %d declared (operation, status) pairs exercised",
		cov.validated, skipped, ops-len(unseenOps), ops, declared-len(unseen), declared)
	var b strings.Builder
	fmt.Fprintf(&b, "OpenAPI coverage of this test run\n%s\n", headline)
	fmt.Fprintf(&b, "\nresponses not validated, by reason:\n%s", strings.Join(reasons, ""))
	fmt.Fprintf(&b, "\noperations never exercised (%d):\n", len(unseenOps))
	for _, o := range unseenOps {
		fmt.Fprintf(&b, "  %s\n", o)
	}
	fmt.Fprintf(&b, "\ndeclared statuses never exercised (%d):\n", len(unseen))
	for _, u := range unseen {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	return headline, b.String()
}

// CoverageFile is where WriteOpenAPICoverage leaves the summary: TW_OPENAPI_COVERAGE,
// else taskweave-openapi-coverage.txt in the temporary directory (the last test binary
// to finish wins; set the variable to keep one run's).
func CoverageFile() string {
	if f := os.Getenv("TW_OPENAPI_COVERAGE"); f != "" {
		return f
	}
	return filepath.Join(os.TempDir(), "taskweave-openapi-coverage.txt")
}

// WriteOpenAPICoverage writes OpenAPICoverage to CoverageFile and, under go test -v,
// prints it; a package's TestMain calls it after m.Run. Nothing is written when no
// answer was checked.
func WriteOpenAPICoverage() {
	cov.mu.Lock()
	n := cov.validated
	cov.mu.Unlock()
	if n == 0 {
		return
	}
	headline, full := OpenAPICoverage()
	if err := os.WriteFile(CoverageFile(), []byte(full), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "openapi coverage:", err)
	}
	if testing.Verbose() {
		fmt.Print(full)
	}
	fmt.Printf("openapi: %s; summary in %s\n", headline, CoverageFile())
}
