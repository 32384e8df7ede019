package sql

import "fmt"

// Notice is a message a statement sends the client besides its result,
// as PostgreSQL's NoticeResponse: a NOTICE or WARNING that does not fail
// the statement.
type Notice struct {
	// Severity is "NOTICE" or "WARNING".
	Severity string
	// Code is the SQLSTATE: 00000 for a NOTICE without one, 01000 for a
	// plain WARNING, 01007/01006 for privileges not granted/revoked.
	Code    string
	Message string
}

// Severities and codes of the notices PostgreSQL sends for redundant
// grants and revokes.
const (
	severityNotice  = "NOTICE"
	severityWarning = "WARNING"

	codeSuccessfulCompletion = "00000"
	codeWarning              = "01000"
	codePrivilegeNotGranted  = "01007"
	codePrivilegeNotRevoked  = "01006"
)

// noticef builds a NOTICE with code 00000.
func noticef(format string, args ...any) Notice {
	return Notice{Severity: severityNotice, Code: codeSuccessfulCompletion, Message: fmt.Sprintf(format, args...)}
}

// warningf builds a WARNING with the given code.
func warningf(code, format string, args ...any) Notice {
	return Notice{Severity: severityWarning, Code: code, Message: fmt.Sprintf(format, args...)}
}
