package automation

import (
	"context"
	"sync"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// stamps are the rule stamps of a project and of SYSTEM (automation_stamps), drawn anew
// by every change of one of their rules; 0 when a scope never had a rule.
type stamps struct {
	project, system int64
}

// maxCached bounds the rule sets a worker keeps; past it the cache starts over.
const maxCached = 10000

// ruleCache keeps the rules a worker read per project and trigger with the stamps it
// read them under. It never decides anything alone: every evaluation reads the current
// stamps from Postgres (with its issue, in one statement) and uses the kept rules only
// when both are unchanged, so every replica sees a rule change at its next event.
type ruleCache struct {
	mu sync.Mutex
	m  map[cacheKey]cachedRules
}

type cacheKey struct {
	project uuid.UUID
	trigger string
}

type cachedRules struct {
	stamps stamps
	rules  []Rule
}

// rulesFor returns the enabled rules of trigger for the project, its own and SYSTEM's,
// oldest first: those kept under st, else read in one query. st was read before the
// rules are, so rules newer than st are at worst read again next time, never kept
// under a stamp they do not belong to. The rules returned are shared: read only.
func (e *Engine) rulesFor(ctx context.Context, projectID uuid.UUID, trigger string, st stamps) ([]Rule, error) {
	key := cacheKey{project: projectID, trigger: trigger}
	e.cache.mu.Lock()
	c, ok := e.cache.m[key]
	e.cache.mu.Unlock()
	if ok && c.stamps == st {
		return c.rules, nil
	}
	rules, err := loadRules(ctx, e.DB.Bun, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("r.enabled AND r.trigger_type = ?", trigger).Where("(r.project_id = ? OR r.project_id IS NULL)", projectID)
	})
	if err != nil {
		return nil, err
	}
	e.cache.mu.Lock()
	if e.cache.m == nil || len(e.cache.m) >= maxCached {
		e.cache.m = map[cacheKey]cachedRules{}
	}
	e.cache.m[key] = cachedRules{stamps: st, rules: rules}
	e.cache.mu.Unlock()
	return rules, nil
}
