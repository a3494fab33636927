package issue_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/issue"
	"github.com/taskweave/taskweave/store/storetest"
)

// seedBench fills b's project with n issues, a third of them assigned and in a sprint,
// each with up to two of three labels and a value of each of two custom fields, as the
// list reads them in production.
func seedBench(tb testing.TB, b *bundle, n int) {
	tb.Helper()
	q := strings.NewReplacer("$p", "'"+b.project.ID.String()+"'", "$k", "'"+b.project.Key+"'",
		"$u", "'"+b.owner.UserID.String()+"'", "$m", "'"+b.member.UserID.String()+"'", "$s", "'"+b.todo.String()+"'").Replace(`
		INSERT INTO labels (project_id, name, color) SELECT $p, 'label ' || g, '#A0B1C2' FROM generate_series(1, 3) AS g;
		INSERT INTO sprints (project_id, name) VALUES ($p, 'Bench sprint');
		INSERT INTO issues (project_id, number, key, title, description, status_id, reporter_id, assignee_id, sprint_id, priority, type, story_points)
		SELECT $p, g, $k || '-' || g, 'Issue ' || g, 'Description of ' || g, $s, $u,
			CASE WHEN g % 3 = 0 THEN $m::uuid END,
			CASE WHEN g % 3 = 0 THEN (SELECT id FROM sprints WHERE project_id = $p) END,
			CASE WHEN g % 2 = 0 THEN 'HIGH' ELSE 'LOW' END, 'TASK', g % 8
		FROM generate_series(1, ` + strconv.Itoa(n) + `) AS g;
		UPDATE projects SET issue_seq = ` + strconv.Itoa(n) + ` WHERE id = $p;
		INSERT INTO issue_labels (issue_id, label_id)
		SELECT i.id, l.id FROM issues AS i JOIN labels AS l ON l.project_id = i.project_id
		WHERE i.project_id = $p AND (i.number + abs(hashtext(l.name))) % 3 <> 0;
		INSERT INTO custom_fields (project_id, name, type, sort_order) VALUES ($p, 'Notes', 'TEXT', 1), ($p, 'Est', 'NUMBER', 2);
		INSERT INTO custom_field_values (issue_id, field_id, text_value, number_value)
		SELECT i.id, f.id, CASE WHEN f.type = 'TEXT' THEN 'note ' || i.number END, CASE WHEN f.type = 'NUMBER' THEN i.number END
		FROM issues AS i CROSS JOIN custom_fields AS f WHERE i.project_id = $p AND f.project_id = $p;`)
	_, err := b.db.Pool.Exec(b.ctx, q)
	require.NoError(tb, err)
	_, err = b.db.Pool.Exec(b.ctx, "VACUUM ANALYZE issues, issue_labels, labels, custom_field_values")
	require.NoError(tb, err)
}

// BenchmarkList measures one list page of 50 through Service.List (statement, scan,
// label and value decoding) on a project of 5,000 issues.
func BenchmarkList(b *testing.B) {
	bb := setup(b, storetest.PackageDB(b))
	seedBench(b, bb, 5000)
	svc := issue.NewService(bb.db, bus(b, bb.db, nil))
	for name, c := range map[string]struct {
		f      issue.Filter
		offset int
	}{
		"page0":    {issue.Filter{}, 0},
		"page2500": {issue.Filter{}, 2500},
		"updated":  {issue.Filter{Sort: issue.SortUpdated}, 0},
		"filtered": {issue.Filter{Priority: issue.PriorityHigh}, 100},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				views, total, err := svc.List(bb.ctx, bb.project, c.f, c.offset, 50)
				if err != nil || len(views) != 50 || total < 2500 {
					b.Fatalf("list: %d views, total %d, %v", len(views), total, err)
				}
			}
		})
	}
}

// BenchmarkGet measures one single read (Get: the issue, labels, versions, fields).
func BenchmarkGet(b *testing.B) {
	bb := setup(b, storetest.PackageDB(b))
	seedBench(b, bb, 200)
	svc := issue.NewService(bb.db, bus(b, bb.db, nil))
	b.ReportAllocs()
	for b.Loop() {
		v, err := svc.Get(bb.ctx, bb.project, issue.Ref{Key: bb.project.Key + "-100"})
		if err != nil || len(v.Labels) == 0 {
			b.Fatalf("get: %v", err)
		}
	}
}
