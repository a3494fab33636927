// Package metric holds what every Prometheus collector of Taskweave's is registered
// through: a component built twice on one registry (a second server or worker in one
// process, as tests build them) shares the collectors of the first instead of
// registering them again.
package metric

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register adds c to reg and returns it, or returns the equal collector registered
// before; it panics on any other registration error (a clash of names with different
// labels or help is a programming error).
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		panic(err)
	}
	return c
}
