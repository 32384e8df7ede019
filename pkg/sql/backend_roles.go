package sql

import (
	"context"

	"github.com/tandemdb/tandem/pkg/compute/plan"
)

// Role is a database role as the backend stores it.
type Role struct {
	Name      string
	Superuser bool
	Login     bool
	// NoInherit is PostgreSQL's NOINHERIT: the role uses the privileges
	// of the roles it is a member of only after SET ROLE.
	NoInherit bool
	// Password is the role's SCRAM-SHA-256 verifier in PostgreSQL's text
	// form (package scram); empty means the role has no password. The
	// backend never sees a password.
	Password string
}

// Grant is the privileges one grantee holds on one object.
type Grant struct {
	// Object names the object: "relation:<GlobalID>", "cluster:<name>",
	// "database:<name>" or "schema:<name>" (objectRef builds them), or
	// "role:<name>" for a membership in that role (Privileges "m", with
	// "A" added for the admin option).
	Object string
	// Grantee is the role holding the privileges; "" is PUBLIC.
	Grantee string
	// Privileges are PostgreSQL's ACL letters: r SELECT, a INSERT,
	// w UPDATE, d DELETE, C CREATE, U USAGE. Empty means none.
	Privileges string
	// Options are the letters of Privileges held WITH GRANT OPTION
	// (PostgreSQL's aclitem "r*"): always a subset of Privileges.
	Options string
	// Grantor is the role that granted them: a grantee holds one grant
	// per grantor on an object, as PostgreSQL's ACL entries ("" for
	// objects without an owner, granted by superusers).
	Grantor string
	// Keep marks the owner's own entry on a relation after every privilege
	// was revoked from the owner: stored without privileges, it tells the
	// owner holds nothing (no entry at all is the default ACL, where the
	// owner holds everything).
	Keep bool
	// Seq orders the grants on one object as PostgreSQL orders its ACL
	// entries (a new grantee's entry goes last): the SQL layer sets it,
	// the backend keeps it.
	Seq uint64
}

// Roles is the part of Backend that stores roles and privileges.
type Roles interface {
	// Roles returns every role, sorted by name.
	Roles(ctx context.Context) ([]Role, error)
	// CreateRole stores a new role and grants (its memberships) in one
	// durable change; a taken name is a 42710 error.
	CreateRole(ctx context.Context, r Role, gs []Grant) error
	// AlterRole replaces an existing role's attributes and password; a
	// missing role is a 42704 error.
	AlterRole(ctx context.Context, r Role) error
	// DropRole drops a role, which the SQL layer has checked owns nothing
	// and holds no privileges, with its memberships (as member and as
	// group); a missing role is a 42704 error.
	DropRole(ctx context.Context, name string) error
	// Grants returns every grant.
	Grants(ctx context.Context) ([]Grant, error)
	// SetGrants stores each grant as what its grantee holds on its object
	// (replacing what it held; no privileges removes it), all in one
	// durable change. The grants on an item go with the item when it is
	// dropped.
	SetGrants(ctx context.Context, gs []Grant) error
	// SetOwner makes the role owner the owner of the user items ids and
	// stores gs as SetGrants does (their ACLs rewritten for the new owner),
	// all in one durable change (ALTER ... OWNER TO, REASSIGN OWNED).
	SetOwner(ctx context.Context, ids []plan.GlobalID, owner string, gs []Grant) error
	// DropOwned drops the items ids (ordered as DropItems wants them) and
	// stores the grants revokes, all in one durable change (DROP OWNED).
	DropOwned(ctx context.Context, ids []plan.GlobalID, revokes []Grant) error
}
