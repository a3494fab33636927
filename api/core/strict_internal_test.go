package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

type strictInner struct {
	Type   *string                    `json:"type"`
	Params map[string]json.RawMessage `json:"params"`
}

type strictBase struct {
	Name *string `json:"name"`
}

type strictRequest struct {
	_ struct{} `readonly:"scope"`
	strictBase
	Items   []strictInner   `json:"items"`
	One     *strictInner    `json:"one"`
	Payload json.RawMessage `json:"payload"`
	ID      *string         `json:"id"`
}

// TestCheckMembers: members are looked up as encoding/json does (promoted fields,
// any case); nested objects of a struct type are checked by path, free-form ones not;
// read-only members are the declared ones and the common ones the type does not read.
func TestCheckMembers(t *testing.T) {
	for body, want := range map[string]string{
		`{"name":"a","NAME":"b","id":"x","items":[{"type":"t","params":{"any":1}}],"one":null,"payload":{"free":1}}`: "",
		`{"items":[{"type":"t"},{"tipe":"t"}]}`: "UNKNOWN_MEMBER items[1].tipe",
		`{"one":{"type":"t","extra":true}}`:     "UNKNOWN_MEMBER one.extra",
		`{"scope":"GLOBAL"}`:                    "READ_ONLY_MEMBER scope",
		`{"createdAt":"x","zzz":1}`:             "READ_ONLY_MEMBER createdAt",
		`{"zzz":1,"aaa":1}`:                     "UNKNOWN_MEMBER aaa",
	} {
		var r strictRequest
		require.NoError(t, DecodeJSON([]byte(body), &r), body)
		err := CheckMembers([]byte(body), &r)
		if want == "" {
			require.NoError(t, err, body)
			continue
		}
		e, ok := err.(*Error)
		require.True(t, ok, "%s: %v", body, err)
		require.Equal(t, want, e.Reason+" "+e.Details["field"], body)
		require.Equal(t, 400, e.Status)
	}
	// A top-level array body is checked element by element.
	var items []strictInner
	err := CheckMembers([]byte(`[{"type":"a"},{"nope":1}]`), &items)
	require.Equal(t, "[1].nope", err.(*Error).Details["field"])
}
