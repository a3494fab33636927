package admin_test

import (
	"testing"

	"github.com/taskweave/taskweave/api/apitest"
)

func TestMain(m *testing.M) { apitest.Main(m) }
