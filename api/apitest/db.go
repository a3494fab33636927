package apitest

import (
	"testing"

	"github.com/taskweave/taskweave/store"
	"github.com/taskweave/taskweave/store/storetest"
)

func storetestNewDB(tb testing.TB) *store.DB { return storetest.NewDB(tb) }
