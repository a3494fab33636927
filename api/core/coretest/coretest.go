// Package coretest holds what the internal tests of the API's areas share: they cannot
// import apitest, which imports the areas through api.
package coretest

import (
	"errors"
	"testing"

	"github.com/taskweave/taskweave/api/core"
)

// CheckDecodeResult asserts the one promise of every body parser: either a value
// that satisfies the rules, or a 400 error with a known code.
func CheckDecodeResult(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ae *core.Error
	if !errors.As(err, &ae) {
		t.Fatalf("non-API error %T: %v", err, err)
	}
	if ae.Status != 400 || (ae.Code != "BAD_REQUEST" && ae.Code != "VALIDATION_ERROR") {
		t.Fatalf("unexpected error %d %s", ae.Status, ae.Code)
	}
	if ae.Code == "VALIDATION_ERROR" && len(ae.Fields) == 0 {
		t.Fatal("validation error without fields")
	}
}
