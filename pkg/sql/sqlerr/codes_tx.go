package sqlerr

// SQLSTATE codes of transaction conflicts.
const (
	// SerializationFailure: a transaction's COMMIT found that a table it
	// read was written by another transaction since (retry the transaction).
	SerializationFailure = "40001"
)
