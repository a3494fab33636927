package customfield_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/taskweave/taskweave/domain/customfield"
)

// TestSQLOneConditionPerField: however many terms name a field, the list statement has
// one condition on it (its substrings in one search of its values, an unticked box
// once), so planning grows with the fields named, not with the terms sent.
func TestSQLOneConditionPerField(t *testing.T) {
	t.Parallel()
	text, other, box := uuid.New(), uuid.New(), uuid.New()
	var conds []customfield.Condition
	for i := range 10 {
		conds = append(conds, customfield.Condition{FieldID: text, Type: customfield.TypeText, Text: "w" + strconv.Itoa(i%5)})
	}
	conds = append(conds,
		customfield.Condition{FieldID: other, Type: customfield.TypeText, Text: "x"},
		customfield.Condition{FieldID: box, Type: customfield.TypeCheckbox},
		customfield.Condition{FieldID: box, Type: customfield.TypeCheckbox})
	var args []any
	sql := customfield.SQL(conds, "i", func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) })
	require.Equal(t, 2, strings.Count(sql, "custom_field_values"), "one search per TEXT field: %s", sql)
	require.Equal(t, 6, strings.Count(sql, "ILIKE"), "each distinct substring once: %s", sql)
	require.Equal(t, 1, strings.Count(sql, "NOT coalesce"), "an unticked box once: %s", sql)
	require.Len(t, args, 2+6+1, "two field ids, six patterns, one term")
}
