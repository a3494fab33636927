package apitest

import (
	"os"
	"testing"

	"github.com/taskweave/taskweave/store/storetest"
)

// Main runs a test package on a database of its own (storetest.Main), then leaves the
// summary of the answers the harness checked against the OpenAPI document in
// CoverageFile() and exits: every HTTP test package's TestMain.
func Main(m *testing.M) {
	code := storetest.Main(m)
	WriteOpenAPICoverage()
	os.Exit(code)
}

// Shared is a harness on the test package's shared database (storetest.PackageDB).
func Shared(t testing.TB) *Harness {
	return New(t, Options{DB: storetest.PackageDB(t)})
}
