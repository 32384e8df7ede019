package archcheck

// Module is the import path prefix of this repository's packages.
const Module = "github.com/tandemdb/tandem/"

// Rule forbids packages whose path (relative to Module) starts with From
// to import anything whose path starts with one of Forbidden, except the
// imports listed in Allowed (exact relative paths, or external prefixes).
type Rule struct {
	Name      string
	From      string
	Forbidden []string
	Allowed   []string
	// Except lists packages under From the rule does not apply to.
	Except []string
}

// engineForbidden is what no engine package may import, plus extra: the
// layers above the engine and the libraries of the outside world.
func engineForbidden(extra ...string) []string {
	return append([]string{
		"pkg/sql", "pkg/catalog", "pkg/environment", "pkg/pgwire", "pkg/placement",
		"pkg/storage", "pkg/orchestrator", "pkg/sharing", "operator", "apis", "cmd", "hack",
		"k8s.io/", "sigs.k8s.io/", "google.golang.org/grpc", "github.com/jackc/pgx",
		"github.com/pganalyze/",
	}, extra...)
}

// Rules is the package map's forbidden arrows (docs/design/architecture.md).
func Rules() []Rule {
	return []Rule{
		{
			Name: "the engine knows nothing of SQL, storage, Kubernetes, gRPC or the replica's assembly",
			From: "pkg/compute/", Forbidden: engineForbidden("pkg/compute/protocol", "pkg/compute/server", "pkg/compute/controller"),
			Except: []string{"pkg/compute/protocol", "pkg/compute/server", "pkg/compute/controller", "pkg/compute/peeklane"},
		},
		{
			Name: "the peek lane carries protocol messages and nothing above them",
			From: "pkg/compute/peeklane", Forbidden: engineForbidden("pkg/compute/server", "pkg/compute/controller", "pkg/compute/runtime", "pkg/compute/render"),
		},
		{
			Name: "the protocol carries the engine's plans and nothing above it",
			From: "pkg/compute/protocol", Forbidden: engineForbidden("pkg/compute/server", "pkg/compute/controller", "pkg/compute/runtime"),
			Allowed: []string{"google.golang.org/grpc"},
		},
		{
			Name: "the replica endpoint serves one engine; it may know the sharing registry's errors",
			From: "pkg/compute/server", Forbidden: engineForbidden("pkg/compute/controller"),
			Allowed: []string{"pkg/sharing", "google.golang.org/grpc/codes", "google.golang.org/grpc/status", "google.golang.org/grpc/metadata"},
		},
		{
			Name: "the compute controller drives replicas through the protocol and the orchestrator interface only",
			From: "pkg/compute/controller", Forbidden: engineForbidden("pkg/compute/server", "pkg/compute/runtime", "pkg/compute/render"),
			Allowed: []string{"pkg/orchestrator", "google.golang.org/grpc"},
			Except:  []string{"pkg/compute/controller/testparams"},
		},
		{
			Name: "sharing and placement sit on the engine, below the protocol",
			From: "pkg/sharing", Forbidden: []string{"pkg/compute/protocol", "pkg/compute/server", "pkg/compute/controller", "pkg/placement", "pkg/sql", "pkg/environment", "pkg/storage", "google.golang.org/grpc", "k8s.io/"},
		},
		{
			Name: "placement decides where dataflows and reads run; it does not speak the protocol",
			From: "pkg/placement", Forbidden: []string{"pkg/compute/protocol", "pkg/compute/server", "pkg/compute/controller", "pkg/sql", "pkg/environment", "pkg/storage", "google.golang.org/grpc", "k8s.io/"},
		},
		{
			Name: "the replica assembly wires the engine, the replica endpoint and placement; it knows no SQL, storage or protocol",
			From: "pkg/replica", Forbidden: []string{"pkg/compute/protocol", "pkg/compute/controller", "pkg/sql", "pkg/environment", "pkg/catalog", "pkg/storage", "pkg/orchestrator", "k8s.io/"},
		},
		{
			Name: "SQL plans into the engine's IR; it knows no coordinator, storage, replica or network",
			From: "pkg/sql", Forbidden: []string{"pkg/environment", "pkg/storage", "pkg/catalog", "pkg/pgwire", "pkg/placement", "pkg/sharing", "pkg/orchestrator", "pkg/compute/controller", "pkg/compute/server", "pkg/compute/runtime", "pkg/compute/protocol", "google.golang.org/grpc", "k8s.io/", "cmd", "operator"},
		},
		{
			Name: "pgwire is the SQL layer's front door, nothing else",
			From: "pkg/pgwire", Forbidden: []string{"pkg/environment", "pkg/storage", "pkg/catalog", "pkg/placement", "pkg/orchestrator", "pkg/compute/controller", "pkg/compute/server", "pkg/compute/runtime", "pkg/compute/protocol", "google.golang.org/grpc", "k8s.io/"},
		},
		{
			Name: "storage keeps tables; it does not know SQL, the coordinator or replicas",
			From: "pkg/storage", Forbidden: []string{"pkg/sql", "pkg/environment", "pkg/catalog", "pkg/placement", "pkg/compute/controller", "pkg/compute/server", "pkg/compute/protocol", "k8s.io/"},
		},
		{
			Name: "the catalog is a durable store of items; it knows nothing above it",
			From: "pkg/catalog", Forbidden: []string{"pkg/sql", "pkg/environment", "pkg/storage", "pkg/compute", "pkg/placement", "google.golang.org/grpc", "k8s.io/"},
		},
		{
			Name: "SCRAM is a leaf: the pgwire front door and the SQL layer share it",
			From: "pkg/scram", Forbidden: []string{"pkg/", "cmd", "operator", "apis", "hack"},
		},
		{
			Name: "the internal links' TLS is a leaf both binaries use",
			From: "pkg/internaltls", Forbidden: []string{"pkg/", "cmd", "operator", "apis", "hack"},
		},
		{
			Name: "flag parsing with environment fallbacks is a leaf both binaries use",
			From: "pkg/flagenv", Forbidden: []string{"pkg/", "cmd", "operator", "apis", "hack"},
		},
		{
			Name: "the profile server is a leaf both binaries use",
			From: "pkg/pprofserver", Forbidden: []string{"pkg/", "cmd", "operator", "apis", "hack"},
		},
		{
			Name: "the orchestrator interface is below the controller",
			From: "pkg/orchestrator", Forbidden: []string{"pkg/sql", "pkg/environment", "pkg/storage", "pkg/catalog", "pkg/compute", "pkg/placement", "operator", "cmd"},
		},
		{
			Name: "the operator renders Kubernetes objects; it knows nothing of the database inside",
			From: "operator", Forbidden: []string{"pkg/", "cmd"},
		},
		{
			Name: "API types are leaves",
			From: "apis", Forbidden: []string{"pkg/", "operator", "cmd"},
		},
		{
			Name: "nothing imports a binary",
			From: "pkg/", Forbidden: []string{"cmd", "hack"},
		},
	}
}
