package api_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/api/stomp"
	"github.com/taskweave/taskweave/api/stomp/stomptest"
)

// stompEnded expects, before deadline, an ERROR frame whose message contains want, and
// then the close; the ERROR frame is returned.
func stompEnded(t *testing.T, c *stomptest.Client, deadline time.Time, want string) stomp.Frame {
	t.Helper()
	f, err := c.Expect("ERROR", time.Until(deadline))
	require.NoError(t, err, "an ERROR frame before the deadline")
	require.Contains(t, f.Value("message"), want)
	_, err = c.Read(5 * time.Second)
	require.Error(t, err, "the connection is closed after ERROR")
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "closed, not silent: %v", err)
	return f
}

// stompAlive proves a session still works: a new subscription gets its receipt.
func stompAlive(t *testing.T, c *stomptest.Client, id string) {
	t.Helper()
	_, err := c.Subscribe(id, "/user/queue/notifications")
	require.NoError(t, err, "the session is still open")
}

// TestStompAccessEndsOnEveryReplica: membership and the account are checked again when
// they change, not only at SUBSCRIBE and CONNECT. Two API servers share the database;
// the removed member follows the board on both, and the change goes through the second
// one. Within a second each of its board subscriptions ends with an ERROR naming the
// subscription and the connection closes; its session on its own queue stays, and so
// do the other members'. Deactivation and deletion close every session of the user.
func TestStompAccessEndsOnEveryReplica(t *testing.T) {
	t.Parallel()
	_, h2, ws1, ws2 := stompReplicas(t)
	f := apitest.NewProject(t, h2)
	topic := "/topic/projects/" + f.Key
	admin := h2.Register("Ada")
	h2.MakeAdmin(admin)
	id := f.Create(t, map[string]any{"title": "Watched"})["id"].(string)

	subscribed := func(ws, token, sub, dest string) *stomptest.Client {
		t.Helper()
		c := stompDial(t, ws, token)
		_, err := c.Subscribe(sub, dest)
		require.NoError(t, err)
		return c
	}
	member1 := subscribed(ws1, f.Member.Access, "board-1", topic)
	member2 := subscribed(ws2, f.Member.Access, "board-2", topic)
	memberQueue := subscribed(ws1, f.Member.Access, "n", "/user/queue/notifications")
	viewer1 := subscribed(ws1, f.Viewer.Access, "board", topic)
	viewerQueue := subscribed(ws2, f.Viewer.Access, "n", "/user/queue/notifications")
	owner := subscribed(ws1, f.Owner.Access, "board", topic)

	// Removal from the project.
	start := time.Now()
	rm := h2.Do("DELETE", f.Path("/members/"+f.Member.ID.String()), nil, f.Owner.Access)
	require.Equal(t, http.StatusNoContent, rm.Status, "%s", rm.Body)
	for _, c := range []struct {
		client *stomptest.Client
		sub    string
	}{{member1, "board-1"}, {member2, "board-2"}} {
		e := stompEnded(t, c.client, start.Add(time.Second), "access to project "+f.Key+" ended")
		require.Equal(t, c.sub, e.Value("subscription"))
		require.Equal(t, topic, e.Value("destination"))
	}
	t.Logf("removal: both replicas ended the subscriptions %v after the request started", time.Since(start))
	stompAlive(t, memberQueue, "n2")
	f.Patch(t, id, map[string]any{"statusId": f.Prog})
	for _, c := range []*stomptest.Client{viewer1, owner} {
		_, m := stompMessage(t, c)
		require.Equal(t, f.Prog.String(), m["newStatusId"], "the others keep following the board")
	}

	// Deactivation: every session of the user, whatever it follows, on both replicas.
	start = time.Now()
	r := h2.Do("POST", "/api/v1/admin/users/"+f.Viewer.ID.String()+"/deactivate", nil, admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	for _, c := range []*stomptest.Client{viewer1, viewerQueue} {
		stompEnded(t, c, start.Add(time.Second), "deactivated")
	}
	t.Logf("deactivation: sessions closed %v after the request started", time.Since(start))

	// Deletion: the removed member's remaining session.
	start = time.Now()
	r = h2.Do("DELETE", "/api/v1/admin/users/"+f.Member.ID.String(), nil, admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	stompEnded(t, memberQueue, start.Add(time.Second), "deleted")

	// The owner saw none of it and still receives.
	f.Patch(t, id, map[string]any{"statusId": f.Done})
	_, m := stompMessage(t, owner)
	require.Equal(t, f.Done.String(), m["newStatusId"])
	stompAlive(t, owner, "n")
}

// TestStompInheritedAccessEnds: a board followed through the organization ends when the
// follower leaves the organization, and for every organization member when the project
// leaves the organization.
func TestStompInheritedAccessEnds(t *testing.T) {
	t.Parallel()
	h := apitest.Shared(t)
	ws, _ := stompServe(t, h)
	f := apitest.NewProject(t, h)
	admin := h.Register("Sys")
	h.MakeAdmin(admin)
	org := apitest.PostOrganization(t, h, admin.Access)
	leaver, stayer := h.Register("Leaver"), h.Register("Stayer")
	apitest.PostOrgMember(t, h, admin.Access, org, leaver.ID, "MEMBER")
	apitest.PostOrgMember(t, h, admin.Access, org, stayer.ID, "ADMIN")
	r := h.Do("PATCH", "/api/v1/projects/"+f.Key+"/organization", map[string]any{"orgId": org}, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	topic := "/topic/projects/" + f.Key

	leaving := stompDial(t, ws, leaver.Access)
	_, err := leaving.Subscribe("b", topic)
	require.NoError(t, err, "an organization MEMBER follows the board as a VIEWER")
	staying := stompDial(t, ws, stayer.Access)
	_, err = staying.Subscribe("b", topic)
	require.NoError(t, err)
	member := stompDial(t, ws, f.Member.Access)
	_, err = member.Subscribe("b", topic)
	require.NoError(t, err)

	start := time.Now()
	r = h.Do("DELETE", "/api/v1/organizations/"+org+"/members/"+leaver.ID.String(), nil, admin.Access)
	require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
	stompEnded(t, leaving, start.Add(time.Second), "access to project "+f.Key+" ended")
	stompAlive(t, staying, "n")

	start = time.Now()
	r = h.Do("PATCH", "/api/v1/projects/"+f.Key+"/organization", map[string]any{"orgId": nil}, admin.Access)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
	stompEnded(t, staying, start.Add(time.Second), "access to project "+f.Key+" ended")
	stompAlive(t, member, "n")
}

// TestStompListenerReconnectTellsSubscribers: what is published while a replica's
// listener is disconnected never reaches it, so after the listener reconnects (at once)
// every subscribed session ends with ERROR reason RESYNC telling its client to reconnect
// and reload, instead of silently missing a board move; a session without subscriptions
// stays (its account is checked again). A reconnecting client then gets what follows, and
// one whose membership was deleted behind the API's back (no notice at all) is refused
// at SUBSCRIBE.
func TestStompListenerReconnectTellsSubscribers(t *testing.T) {
	t.Parallel()
	h := apitest.New(t, apitest.Options{}) // its own database: the only listener on it is this server's
	ws, _ := stompServe(t, h)
	f := apitest.NewProject(t, h)
	iss := f.Create(t, map[string]any{"title": "Moved in the gap"})
	c := stompDial(t, ws, f.Member.Access)
	_, err := c.Subscribe("b", "/topic/projects/"+f.Key)
	require.NoError(t, err)
	owner := stompDial(t, ws, f.Owner.Access)
	_, err = owner.Subscribe("b", "/topic/projects/"+f.Key)
	require.NoError(t, err)
	idle := stompDial(t, ws, f.Member.Access) // connected, nothing subscribed

	ctx := context.Background()
	_, err = h.DB.Pool.Exec(ctx, "DELETE FROM project_members WHERE project_id = $1 AND user_id = $2", f.ProjectID, f.Member.ID)
	require.NoError(t, err)
	var killed int
	require.NoError(t, h.DB.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query LIKE 'LISTEN %' AND pid <> pg_backend_pid()`).Scan(&killed))
	require.Equal(t, 1, killed, "the server's listener connection")
	// A move committed right after the drop, while the listener may be reconnecting.
	f.Patch(t, iss["key"].(string), map[string]any{"statusId": f.Prog.String()})

	deadline := time.Now().Add(5 * time.Second)
	for _, s := range []*stomptest.Client{owner, c} {
		fr := stompEnded(t, s, deadline, "reconnect and reload")
		require.Equal(t, "RESYNC", fr.Value("reason"))
	}
	stompAlive(t, idle, "n") // its account is still active; it follows nothing that could be stale

	// The owner reconnects and gets the next move; the removed member is refused.
	again := stompDial(t, ws, f.Owner.Access)
	_, err = again.Subscribe("b", "/topic/projects/"+f.Key)
	require.NoError(t, err)
	f.Patch(t, iss["key"].(string), map[string]any{"statusId": f.Done.String()})
	msg, err := again.Expect("MESSAGE", 5*time.Second)
	require.NoError(t, err)
	require.Contains(t, string(msg.Body), `"ISSUE_MOVED"`)
	refused := stompDial(t, ws, f.Member.Access)
	err = refused.Send(stomp.Frame{Command: "SUBSCRIBE", Headers: []stomp.Header{{Name: "id", Value: "b"}, {Name: "destination", Value: "/topic/projects/" + f.Key}}})
	require.NoError(t, err)
	stompRefused(t, refused, "")
}
