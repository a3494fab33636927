package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/taskweave/taskweave/api"
	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/api/stomp"
	"github.com/taskweave/taskweave/api/stomp/stomptest"
	"github.com/taskweave/taskweave/domain/auth"
	"github.com/taskweave/taskweave/domain/event"
	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/domain/realtime"
	"github.com/taskweave/taskweave/domain/sprint"
	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

// stompServe serves h on its own 127.0.0.1 listener until the test ends (the shutdown
// also closes the realtime listener, before the database goes) and returns its
// WebSocket and HTTP base URLs.
func stompServe(t *testing.T, h *apitest.Harness) (ws, base string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = h.Server.App.Listener(ln) }()
	t.Cleanup(func() { require.NoError(t, h.Server.App.ShutdownWithTimeout(5*time.Second)) })
	return "ws://" + ln.Addr().String(), "http://" + ln.Addr().String()
}

// stompReplicas serves two API servers on the package's database, as two replicas
// behind one load balancer, and returns them with their WebSocket bases.
func stompReplicas(t *testing.T) (h1, h2 *apitest.Harness, ws1, ws2 string) {
	t.Helper()
	db := storetest.PackageDB(t)
	h1, h2 = apitest.New(t, apitest.Options{DB: db}), apitest.New(t, apitest.Options{DB: db})
	ws1, _ = stompServe(t, h1)
	ws2, _ = stompServe(t, h2)
	return h1, h2, ws1, ws2
}

// stompDial opens /ws-stomp (or path) on ws and connects with token.
func stompDial(t *testing.T, ws, token string) *stomptest.Client {
	t.Helper()
	c, err := stomptest.Dial(context.Background(), ws+"/ws-stomp", "v12.stomp")
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = c.Connect(token, "")
	require.NoError(t, err)
	return c
}

// stompRefused expects an ERROR frame containing want and then the close.
func stompRefused(t *testing.T, c *stomptest.Client, want string) {
	t.Helper()
	f, err := c.Expect("ERROR", 5*time.Second)
	require.NoError(t, err)
	require.Contains(t, f.Value("message"), want)
	_, err = c.Read(5 * time.Second)
	require.Error(t, err, "the connection is closed after ERROR")
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "closed, not silent: %v", err)
}

// stompMessage reads the next MESSAGE and decodes its JSON body.
func stompMessage(t *testing.T, c *stomptest.Client) (stomp.Frame, map[string]any) {
	t.Helper()
	f, err := c.Expect("MESSAGE", 10*time.Second)
	require.NoError(t, err)
	require.Equal(t, "application/json", f.Value("content-type"))
	require.Equal(t, fmt.Sprint(len(f.Body)), f.Value("content-length"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(f.Body, &m), "%s", f.Body)
	return f, m
}

func TestStompConnectNeedsAValidAccessToken(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	ws, _ := stompServe(t, h)
	u := h.Register("Stomper")

	connect := func(t *testing.T, header string) *stomptest.Client {
		t.Helper()
		c, err := stomptest.Dial(context.Background(), ws+"/ws", "v12.stomp")
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		f := stomp.Frame{Command: "CONNECT", Headers: []stomp.Header{{Name: "accept-version", Value: "1.2"}}}
		if header != "" {
			f.Add("Authorization", header)
		}
		require.NoError(t, c.Send(f))
		return c
	}
	fam := familyOf(t, h, u.Refresh)
	mint := func(accessTTL time.Duration) string {
		tokens, err := auth.NewTokens(apitest.Secret, accessTTL, h.Settings.RefreshTokenTTL)
		require.NoError(t, err)
		tok, _, err := tokens.IssueAccess(u.ID, nil, &fam)
		require.NoError(t, err)
		return tok
	}

	stompRefused(t, connect(t, ""), "Authorization")
	stompRefused(t, connect(t, "Bearer not-a-jwt"), "invalid or expired")
	stompRefused(t, connect(t, "Bearer "+u.Refresh), "invalid or expired")
	pat := h.Do("POST", "/api/v1/me/tokens", map[string]any{"name": "ws", "scope": "READ_WRITE"}, u.Access)
	require.Equal(t, http.StatusCreated, pat.Status, "%s", pat.Body)
	stompRefused(t, connect(t, "Bearer "+pat.JSON(t)["plaintext"].(string)), "invalid or expired")

	// exp has a grace of the refresh-token lifetime while the token's login session
	// lives: the web client reconnects with the header it first built.
	c := connect(t, "Bearer "+mint(-time.Hour))
	f, err := c.Expect("CONNECTED", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "1.2", f.Value("version"))
	require.Equal(t, "0,0", f.Value("heart-beat"), "no heart-beat header: no beats either way")
	stompRefused(t, connect(t, "Bearer "+mint(-h.Settings.RefreshTokenTTL-time.Minute)), "invalid or expired")

	// An inactive user is refused even with a fresh token.
	_, err = h.DB.Pool.Exec(context.Background(), "UPDATE users SET active = false WHERE id = $1", u.ID)
	require.NoError(t, err)
	stompRefused(t, connect(t, "Bearer "+u.Access), "invalid or expired")
}

func TestStompMembersReceiveIssueMovedAfterCommit(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	ws, _ := stompServe(t, f.H)
	topic := "/topic/projects/" + f.Key

	// Every project role may follow the board; an outsider or a removed member may not.
	viewer := stompDial(t, ws, f.Viewer.Access)
	_, err := viewer.Subscribe("board", topic)
	require.NoError(t, err)
	member := stompDial(t, ws, f.Member.Access)
	_, err = member.Subscribe("board", topic)
	require.NoError(t, err)

	outsider := stompDial(t, ws, f.Outsider.Access)
	require.NoError(t, outsider.Send(stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{
		{Name: "id", Value: "0"}, {Name: "destination", Value: topic}, {Name: "receipt", Value: "r-1"}}}))
	e, err := outsider.Expect("ERROR", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "r-1", e.Value("receipt-id"))
	require.Contains(t, e.Value("message"), "not a member")

	unknown := stompDial(t, ws, f.Owner.Access)
	_, err = unknown.Subscribe("x", "/topic/projects/NOSUCHKEY")
	require.ErrorIs(t, err, stomptest.ErrUnexpected)

	iss := f.Create(t, map[string]any{"title": "Live"})
	id := iss["id"].(string)
	f.Patch(t, id, map[string]any{"statusId": f.Prog})
	for _, c := range []*stomptest.Client{viewer, member} {
		frame, m := stompMessage(t, c)
		require.Equal(t, topic, frame.Value("destination"))
		require.Equal(t, "board", frame.Value("subscription"))
		require.Equal(t, map[string]any{"type": "ISSUE_MOVED", "issueId": id, "newStatusId": f.Prog.String(), "projectKey": f.Key}, m)
	}

	// A refused transition rolls back and sends nothing: the next message each client
	// sees is the move after it.
	var wf uuid.UUID
	require.NoError(t, f.H.DB.Pool.QueryRow(context.Background(), "SELECT workflow_id FROM projects WHERE id = $1", f.ProjectID).Scan(&wf))
	_, err = f.H.DB.Pool.Exec(context.Background(), `INSERT INTO workflow_transitions (workflow_id, from_status_id, to_status_id) VALUES ($1, $2, $3)`,
		wf, f.Prog, f.Done)
	require.NoError(t, err)
	r := f.H.Do("PATCH", f.Path("/issues/"+id), map[string]any{"statusId": f.Todo}, f.Owner.Access)
	apitest.RequireProblem(t, r, 400, "BAD_REQUEST", apitest.Reason("TRANSITION_NOT_ALLOWED"))
	f.Patch(t, id, map[string]any{"statusId": f.Done})
	for _, c := range []*stomptest.Client{viewer, member} {
		_, m := stompMessage(t, c)
		require.Equal(t, f.Done.String(), m["newStatusId"], "the refused move sent nothing")
	}

	// Membership is checked at SUBSCRIBE: once removed, the member cannot subscribe again.
	rm := f.H.Do("DELETE", f.Path("/members/"+f.Member.ID.String()), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, rm.Status, "%s", rm.Body)
	again := stompDial(t, ws, f.Member.Access)
	_, err = again.Subscribe("board", topic)
	require.ErrorIs(t, err, stomptest.ErrUnexpected)
}

func TestStompRolledBackEventSendsNothing(t *testing.T) {
	t.Parallel()
	f := apitest.NewProject(t, apitest.Shared(t))
	ws, _ := stompServe(t, f.H)
	c := stompDial(t, ws, f.Owner.Access)
	_, err := c.Subscribe("b", "/topic/projects/"+f.Key)
	require.NoError(t, err)

	bus := f.H.Server.Bus()
	subject := issue.Subject{ProjectID: f.ProjectID, ProjectKey: f.Key, IssueID: uuid.New(), IssueKey: f.Key + "-1"}
	rolledBack := issue.StatusChanged{Subject: subject, OldStatusID: f.Todo, NewStatusID: f.Prog, At: time.Now()}
	boom := errors.New("rolled back on purpose")
	err = store.InTx(context.Background(), f.H.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		if err := bus.Emit(ctx, tx, rolledBack); err != nil {
			return err
		}
		return boom
	})
	require.ErrorIs(t, err, boom)
	committed := issue.StatusChanged{Subject: subject, OldStatusID: f.Todo, NewStatusID: f.Done, At: time.Now()}
	require.NoError(t, store.InTx(context.Background(), f.H.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
		return bus.Emit(ctx, tx, committed)
	}))
	// Notifications arrive in commit order, so had the rolled-back one been sent it
	// would come first.
	_, m := stompMessage(t, c)
	require.Equal(t, f.Done.String(), m["newStatusId"])

	// Sprint start and completion push SPRINT_UPDATED.
	sprintID := uuid.New()
	ss := sprint.Subject{ProjectID: f.ProjectID, ProjectKey: f.Key, SprintID: sprintID, SprintName: "S1"}
	for _, ev := range []any{sprint.Started{Subject: ss, At: time.Now()}, sprint.Completed{Subject: ss, At: time.Now()}} {
		require.NoError(t, store.InTx(context.Background(), f.H.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
			return bus.Emit(ctx, tx, ev.(event.Event))
		}))
		_, m = stompMessage(t, c)
		require.Equal(t, map[string]any{"type": "SPRINT_UPDATED", "sprintId": sprintID.String(), "projectKey": f.Key}, m, "%T", ev)
	}
}

func TestStompFanOutAcrossTwoServers(t *testing.T) {
	t.Parallel()
	db := storetest.PackageDB(t)
	h1 := apitest.New(t, apitest.Options{DB: db})
	h2 := apitest.New(t, apitest.Options{DB: db})
	ws1, _ := stompServe(t, h1)
	_, base2 := stompServe(t, h2)

	f := apitest.NewProject(t, h2)
	c := stompDial(t, ws1, f.Owner.Access)
	_, err := c.Subscribe("b", "/topic/projects/"+f.Key)
	require.NoError(t, err)
	id := f.Create(t, map[string]any{"title": "Across"})["id"].(string)

	// The move goes through server 2 over real HTTP; the client sits on server 1.
	body, _ := json.Marshal(map[string]any{"statusId": f.Done})
	req, err := http.NewRequest(http.MethodPatch, base2+"/api/v1/projects/"+f.Key+"/issues/"+id, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+f.Owner.Access)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	_, m := stompMessage(t, c)
	require.Equal(t, map[string]any{"type": "ISSUE_MOVED", "issueId": id, "newStatusId": f.Done.String(), "projectKey": f.Key}, m)
}

func TestStompSessionOutlivesTheRequestTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 150 * time.Millisecond
	db := storetest.PackageDB(t)
	h := apitest.New(t, apitest.Options{DB: db, Configure: func(s *api.Settings) { s.RequestTimeout = timeout }})
	ws, _ := stompServe(t, h)
	// The fixture and the writes go through a server with the usual deadline, on the same
	// database: 150 ms is the session's test, not the writes' (a loaded machine misses it).
	f := apitest.NewProject(t, apitest.New(t, apitest.Options{DB: db}))
	c := stompDial(t, ws, f.Owner.Access)
	_, err := c.Subscribe("b", "/topic/projects/"+f.Key)
	require.NoError(t, err)

	// Keep talking well past the request deadline: the session runs on its own context.
	deadline := time.Now().Add(3 * timeout)
	for i := 0; time.Now().Before(deadline); i++ {
		receipt := fmt.Sprint("r-", i)
		require.NoError(t, c.Send(stomp.Frame{Command: "SEND", Headers: []stomp.Header{
			{Name: "destination", Value: "/app/ping"}, {Name: "receipt", Value: receipt}}}))
		fr, err := c.Expect("RECEIPT", 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, receipt, fr.Value("receipt-id"))
	}
	id := f.Create(t, map[string]any{"title": "Late"})["id"].(string)
	f.Patch(t, id, map[string]any{"statusId": f.Prog})
	_, m := stompMessage(t, c)
	require.Equal(t, id, m["issueId"])
}

func TestStompEndpointsNeedAWebSocket(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	for _, p := range []string{"/ws-stomp", "/ws"} {
		r := h.Do("GET", p, nil, "")
		require.Equal(t, http.StatusUpgradeRequired, r.Status, "%s: %s", p, r.Body)
		m := r.JSON(t)
		require.Equal(t, "UPGRADE_REQUIRED", m["code"])
		require.Equal(t, "WEBSOCKET_REQUIRED", m["reason"])
	}
}

func TestStompDisconnectReceipt(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	ws, _ := stompServe(t, h)
	u := h.Register("Leaver")
	c := stompDial(t, ws, u.Access)
	_, err := c.Subscribe("n", "/user/queue/notifications")
	require.NoError(t, err)
	require.NoError(t, c.Send(stomp.Frame{Command: "DISCONNECT", Headers: []stomp.Header{{Name: "receipt", Value: "bye-1"}}}))
	f, err := c.Expect("RECEIPT", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "bye-1", f.Value("receipt-id"))
	_, err = c.Read(5 * time.Second)
	var ne net.Error
	require.Error(t, err)
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "closed after the receipt: %v", err)
}

func TestStompHeartBeatNegotiation(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	ws, _ := stompServe(t, h)
	u := h.Register("Beater")
	for _, tc := range []struct{ client, want string }{
		{"0,0", "0,0"}, {"10000,10000", "10000,10000"}, {"4000,20000", "20000,10000"}, {"0,5000", "10000,0"},
	} {
		c, err := stomptest.Dial(context.Background(), ws+"/ws-stomp", "v12.stomp")
		require.NoError(t, err)
		f, err := c.Connect(u.Access, tc.client)
		require.NoError(t, err)
		require.Equal(t, tc.want, f.Value("heart-beat"), "client %s", tc.client)
		require.Equal(t, "1.2", f.Value("version"))
		_ = c.Close()
	}
}

func TestStompUserQueueIsPrivate(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	ws, _ := stompServe(t, h)
	a, b := h.Register("Ann"), h.Register("Ben")
	ca, cb := stompDial(t, ws, a.Access), stompDial(t, ws, b.Access)
	for _, c := range []*stomptest.Client{ca, cb} {
		_, err := c.Subscribe("n", "/user/queue/notifications")
		require.NoError(t, err)
	}
	notify := func(u apitest.User, body string) {
		require.NoError(t, store.InTx(context.Background(), h.DB.Bun, func(ctx context.Context, tx bun.Tx) error {
			return realtime.Publish(ctx, tx, realtime.Message{Destination: realtime.UserDestination(u.ID, realtime.NotificationQueue), Body: json.RawMessage(body)})
		}))
	}
	notify(a, `{"for":"ann"}`)
	notify(b, `{"for":"ben"}`)
	f, m := stompMessage(t, ca)
	require.Equal(t, "/user/queue/notifications", f.Value("destination"))
	require.Equal(t, map[string]any{"for": "ann"}, m)
	// Ben's first message is his own: Ann's never reached him.
	_, m = stompMessage(t, cb)
	require.Equal(t, map[string]any{"for": "ben"}, m)
}
