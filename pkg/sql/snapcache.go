package sql

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// snapshotCache keeps the catalog snapshot built at the backend's latest
// catalog generation, so that a statement costs one generation read
// instead of O(catalog items) map building (a point read's largest SQL
// cost). The cached snapshot is shared by every session and never
// mutated: Session.snapshot hands out a shallow copy with the session's
// fields, and a statement that edits its snapshot's roles or memberships
// first takes its own copy of them (snapshot.ownRoles).
type snapshotCache struct {
	mu    sync.Mutex
	valid bool
	gen   uint64
	base  *snapshot
	// builds counts snapshots built, for tests.
	builds uint64
}

// get returns the snapshot at the backend's current generation, building
// it when the cached one is older. The generation is read before the
// catalog, so a snapshot built from a newer state than gen is only served
// to statements that started before that state was read, never for a
// later generation.
func (c *snapshotCache) get(ctx context.Context, b Backend) (*snapshot, error) {
	gen, err := b.Generation(ctx)
	if err != nil {
		return nil, fmt.Errorf("read catalog generation: %w", err)
	}
	c.mu.Lock()
	if c.valid && c.gen == gen {
		base := c.base
		c.mu.Unlock()
		return base, nil
	}
	c.mu.Unlock()
	base, err := buildSnapshot(ctx, b)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.builds++
	if !c.valid || gen > c.gen {
		c.valid, c.gen, c.base = true, gen, base
	}
	c.mu.Unlock()
	return base, nil
}

// built reports how many snapshots were built.
func (c *snapshotCache) built() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.builds
}

// ownRoles gives sn its own roles and memberships, which the cached
// snapshot shares with every session, before a statement edits them
// (CREATE ROLE, GRANT and REVOKE of role memberships).
func (sn *snapshot) ownRoles() {
	sn.roles = maps.Clone(sn.roles)
	memberOf := make(map[string][]membership, len(sn.memberOf))
	for k, ms := range sn.memberOf {
		memberOf[k] = slices.Clone(ms)
	}
	sn.memberOf = memberOf
}
