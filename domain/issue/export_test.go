package issue

// MatchesHits is the pages m served from its entries.
func MatchesHits(m *Matches) int64 { return m.hits.Load() }
