package api_test

import (
	"testing"

	"github.com/taskweave/taskweave/api/apitest"
	"github.com/taskweave/taskweave/domain/attachment/s3test"
)

func TestMain(m *testing.M) {
	if s3test.ServeIfChild() { // the fake bucket of TestS3UploadMemory, in a process of its own
		return
	}
	apitest.Main(m)
}
