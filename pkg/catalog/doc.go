// Package catalog is the controller's durable catalog: clusters, replicas,
// catalog items (sources, tables, views, materialized views, indexes, with
// their SQL, relation description and plan as opaque JSON), system
// parameters, roles (with SCRAM-SHA-256 verifiers, never passwords) and
// the privileges granted on objects, and the allocator of user GlobalIds. It is stored in one bbolt
// file under the controller's data directory.
//
// Invariants:
//   - Every change is one bbolt transaction, fsynced before it returns: a
//     change the caller saw succeed survives a crash.
//   - GlobalIds are allocated durably and never reused, even for dropped
//     items, so an id seen by a replica or a client names one object forever.
//   - Item names are unique; ids are unique per namespace.
//   - Role names are unique. A grant names an object, a grantee and a
//     grantor (one grant per grantor, as PostgreSQL's ACL entries; a
//     membership is one per member); the grants on an item are dropped
//     with it, and a role that owns items, holds grants or granted them
//     cannot be dropped (ErrInUse).
//   - A catalog written by an older version is upgraded when opened, in
//     one transaction (version 1's grants without grantors become their
//     item's owner's); a newer one is refused.
//   - The catalog stores plans as bytes and never interprets them; the
//     compute and SQL layers own their meaning.
package catalog
