package sqlerr

// SQLSTATE codes of constraint enforcement, COPY and ALTER TABLE.
const (
	UniqueViolation             = "23505"
	CheckViolation              = "23514"
	InvalidTableDefinition      = "42P16"
	BadCopyFileFormat           = "22P04"
	ObjectNotInPrerequisite     = "55000"
	InvalidBinaryRepresentation = "22P03"
)
