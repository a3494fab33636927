package api_test

import (
	"os"
	"testing"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// shared is a harness on the package's shared database.
func shared(t *testing.T) *apitest.Harness {
	return apitest.New(t, apitest.Options{DB: storetest.PackageDB(t)})
}
