package issue

import "time"

// MatchesHits is the pages m served from its entries.
func MatchesHits(m *Matches) int64 { return m.hits.Load() }

// SetRebuildEvery sets the least time between two whole reads of one list by m.
func SetRebuildEvery(m *Matches, d time.Duration) { m.rebuild = d }

// MayBuild is m.mayBuild.
func MayBuild(m *Matches, key string) bool { return m.mayBuild(key) }
