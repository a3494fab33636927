// Command goclient is a script written against the client that oapi-codegen generates
// from Taskweave's OpenAPI document, as an integration would be. TestOpenAPIGoClient
// (api/openapi_client_test.go) generates the client into twclient/ of a copy of this
// module, builds the copy and runs it against a real server:
//
//	goclient <base URL> <project key>
//
// It registers, creates a project, creates two issues, moves one to an IN_PROGRESS
// status, lists the project's issues filtered by status and priority, and reads a page
// of the moved issue's activity. It prints one JSON object with what it saw and exits 0,
// or prints the failing step to stderr and exits 1.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/taskweave/taskweave/api/testdata/goclient/twclient"
)

// Result is what the journey saw; the test checks it against the database.
type Result struct {
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

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: goclient <base URL> <project key>")
		os.Exit(2)
	}
	res, err := journey(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

// expect fails a step unless the generated client decoded the wanted status.
func expect(step string, resp *http.Response, body []byte, want int, decoded bool) error {
	if resp.StatusCode != want || !decoded {
		return fmt.Errorf("%s: HTTP %d (want %d, decoded %v): %s", step, resp.StatusCode, want, decoded, body)
	}
	return nil
}

func journey(base, key string) (*Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hc := &http.Client{Timeout: 30 * time.Second}
	anon, err := twclient.NewClientWithResponses(base, twclient.WithHTTPClient(hc))
	if err != nil {
		return nil, err
	}
	res := &Result{UserEmail: "journey-" + key + "@example.com"}

	reg, err := anon.RegisterWithResponse(ctx, twclient.RegisterJSONRequestBody{
		Email: openapi_types.Email(res.UserEmail), DisplayName: "Journey", Password: "correct horse battery"})
	if err != nil {
		return nil, fmt.Errorf("register: %w", err)
	}
	if err := expect("register", reg.HTTPResponse, reg.Body, http.StatusCreated, reg.JSON201 != nil); err != nil {
		return nil, err
	}
	token := reg.JSON201.AccessToken
	c, err := twclient.NewClientWithResponses(base, twclient.WithHTTPClient(hc),
		twclient.WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		return nil, err
	}

	desc := "Made by the generated Go client"
	proj, err := c.CreateProjectWithResponse(ctx, twclient.CreateProjectJSONRequestBody{Key: key, Name: "Journey " + key, Description: &desc})
	if err != nil {
		return nil, fmt.Errorf("create project: %w", err)
	}
	if err := expect("create project", proj.HTTPResponse, proj.Body, http.StatusCreated, proj.JSON201 != nil); err != nil {
		return nil, err
	}
	res.ProjectID = proj.JSON201.Id.String()

	wf, err := c.GetWorkflowWithResponse(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	if err := expect("workflow", wf.HTTPResponse, wf.Body, http.StatusOK, wf.JSON200 != nil); err != nil {
		return nil, err
	}
	var inProgress *twclient.WorkflowStatus
	for i, s := range wf.JSON200.Statuses {
		if s.Category == twclient.WorkflowStatusCategoryINPROGRESS {
			inProgress = &wf.JSON200.Statuses[i]
			break
		}
	}
	if inProgress == nil {
		return nil, fmt.Errorf("workflow: no IN_PROGRESS status in %s", wf.Body)
	}
	res.InProgressID = inProgress.Id.String()

	bug, high := twclient.IssueType("BUG"), twclient.IssuePriority("HIGH")
	moved, err := c.CreateIssueWithResponse(ctx, key, twclient.CreateIssueJSONRequestBody{Title: "Login page is blank", Type: &bug, Priority: &high})
	if err != nil {
		return nil, fmt.Errorf("create issue: %w", err)
	}
	if err := expect("create issue", moved.HTTPResponse, moved.Body, http.StatusCreated, moved.JSON201 != nil); err != nil {
		return nil, err
	}
	res.MovedIssue = moved.JSON201.Key
	other, err := c.CreateIssueWithResponse(ctx, key, twclient.CreateIssueJSONRequestBody{Title: "Also high, not started", Priority: &high})
	if err != nil {
		return nil, fmt.Errorf("create second issue: %w", err)
	}
	if err := expect("create second issue", other.HTTPResponse, other.Body, http.StatusCreated, other.JSON201 != nil); err != nil {
		return nil, err
	}
	res.OtherIssue = other.JSON201.Key

	upd, err := c.UpdateIssueWithResponse(ctx, key, res.MovedIssue, twclient.UpdateIssueJSONRequestBody{StatusId: &inProgress.Id})
	if err != nil {
		return nil, fmt.Errorf("move issue: %w", err)
	}
	if err := expect("move issue", upd.HTTPResponse, upd.Body, http.StatusOK, upd.JSON200 != nil); err != nil {
		return nil, err
	}
	if upd.JSON200.StatusId != inProgress.Id || upd.JSON200.SlaStartTime == nil {
		return nil, fmt.Errorf("move issue: status %s, slaStartTime %v", upd.JSON200.StatusId, upd.JSON200.SlaStartTime)
	}

	size := 10
	list, err := c.ListIssuesWithResponse(ctx, key, &twclient.ListIssuesParams{StatusId: &inProgress.Id, Priority: &high, Size: &size})
	if err != nil {
		return nil, fmt.Errorf("list issues: %w", err)
	}
	if err := expect("list issues", list.HTTPResponse, list.Body, http.StatusOK, list.JSON200 != nil); err != nil {
		return nil, err
	}
	res.ListedTotal = list.JSON200.TotalElements
	res.Listed = []string{}
	for _, is := range list.JSON200.Content {
		res.Listed = append(res.Listed, is.Key)
	}

	page := twclient.CommentPageNumber(0)
	act, err := c.ListActivityWithResponse(ctx, key, res.MovedIssue, &twclient.ListActivityParams{Page: &page, Size: &size})
	if err != nil {
		return nil, fmt.Errorf("activity: %w", err)
	}
	if err := expect("activity", act.HTTPResponse, act.Body, http.StatusOK, act.JSON200 != nil); err != nil {
		return nil, err
	}
	res.ActivityTotal = act.JSON200.TotalElements
	res.ActivityTypes = []string{}
	for _, a := range act.JSON200.Content {
		res.ActivityTypes = append(res.ActivityTypes, string(a.Type))
		if a.Type == twclient.ActivityTypeSTATUSCHANGED && a.NewValue != nil {
			res.StatusNewValue = *a.NewValue
		}
	}
	return res, nil
}
