package work_test

import (
	"os"
	"testing"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store/storetest"
)

// TestMain runs the package's tests on their own database, then leaves the summary of
// the answers the harness checked against the OpenAPI document in
// apitest.CoverageFile().
func TestMain(m *testing.M) {
	code := storetest.Main(m)
	apitest.WriteOpenAPICoverage()
	os.Exit(code)
}

// shared is a harness on the package's shared database.
func shared(t *testing.T) *apitest.Harness {
	return apitest.New(t, apitest.Options{DB: storetest.PackageDB(t)})
}
