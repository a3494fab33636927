package core

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// TestUnavailableFailuresLoggedAtABoundedRate: a burst of requests failing because the
// database refuses connections writes one line per window with the count of the others;
// any other 5xx is logged every time.
func TestUnavailableFailuresLoggedAtABoundedRate(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	f := NewFailureLog(slog.New(slog.NewJSONHandler(&buf, nil)))
	refused := &pgconn.PgError{Code: "53300", Message: "sorry, too many clients already"}
	for range 1000 {
		f.Failed(context.Background(), "GET", "/api/v1/projects", 503, refused)
	}
	require.Equal(t, 1, strings.Count(buf.String(), "database unavailable"), "one line for the burst")
	f.last = f.last.Add(-unavailableLogEvery) // the next window
	f.Failed(context.Background(), "GET", "/api/v1/projects", 503, refused)
	require.Equal(t, 2, strings.Count(buf.String(), "database unavailable"))
	require.Contains(t, buf.String(), `"more_since_last_line":999`)

	for range 3 {
		f.Failed(context.Background(), "GET", "/x", 500, errors.New("a bug"))
	}
	require.Equal(t, 3, strings.Count(buf.String(), `"msg":"request failed"`), "other failures are each logged")
}
