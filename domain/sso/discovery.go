package sso

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/sync/singleflight"
)

// discoveryCache keeps each issuer's discovered metadata (and, inside the
// oidc.Provider, its signing keys) for a short while, so a login does not fetch the
// discovery document twice. Only provider metadata is cached here: SSO configs are read
// from Postgres on every request, so a change made on another replica applies at once.
type discoveryCache struct {
	client *http.Client
	ttl    time.Duration
	now    func() time.Time
	group  singleflight.Group

	mu      sync.Mutex
	entries map[string]discovered
}

type discovered struct {
	provider *oidc.Provider
	at       time.Time
}

func newDiscoveryCache(client *http.Client, ttl time.Duration, now func() time.Time) *discoveryCache {
	return &discoveryCache{client: client, ttl: ttl, now: now, entries: map[string]discovered{}}
}

// provider returns the issuer's metadata, discovering it when not cached or stale. A
// failed discovery is not cached.
func (c *discoveryCache) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	c.mu.Lock()
	e, ok := c.entries[issuer]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < c.ttl {
		return e.provider, nil
	}
	v, err, _ := c.group.Do(issuer, func() (any, error) {
		p, err := oidc.NewProvider(oidc.ClientContext(ctx, c.client), issuer)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.entries[issuer] = discovered{provider: p, at: c.now()}
		c.mu.Unlock()
		return p, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*oidc.Provider), nil
}
