package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/tandemdb/tandem/pkg/sql"
)

// sendNotices sends a statement's notices (NoticeResponse), each with its
// severity (also unlocalized, as PostgreSQL 9.6 and later send it), SQLSTATE
// and message, before the statement's result.
func sendNotices(be *pgproto3.Backend, notices []sql.Notice) {
	for _, n := range notices {
		be.Send(&pgproto3.NoticeResponse{Severity: n.Severity, SeverityUnlocalized: n.Severity, Code: n.Code, Message: n.Message})
	}
}
