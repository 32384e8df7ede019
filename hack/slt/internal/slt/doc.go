// Package slt reads SQLite's sqllogictest scripts and checks results the
// way SQLite's reference runner does, so that any database speaking SQL can
// be scored against the corpus's expected answers.
//
// The package has three parts:
//
//   - Parse turns a script into Records: `statement ok|error`,
//     `query TYPES [nosort|rowsort|valuesort] [LABEL]` with the expected
//     values after `----` (one value per line, or `N values hashing to MD5`),
//     `hash-threshold N`, `halt`, and the `skipif DB` / `onlyif DB`
//     conditions that precede a record. Lines starting with `#` between
//     records are comments, and so is anything after `#` on a condition line.
//   - FormatValue, SortValues and HashValues reproduce the reference
//     runner's result text: every value on its own line, `I` columns as
//     integers, `R` columns with three decimals, NULL as "NULL", the empty
//     string as "(empty)" and bytes outside printable ASCII as '@'; rows
//     sorted as whole rows (rowsort) or value by value (valuesort), byte
//     by byte; and the hash being the MD5 of every value followed by "\n".
//   - Run executes the records of one script against a Conn and classifies
//     each one (Outcome): passed, wrong (the query ran and its values
//     differ: a wrong answer), errored (a statement or query expected to
//     succeed was refused: a gap, classified by SQLSTATE), unexpectedly
//     accepted (`statement error` that succeeded) and skipped. With
//     Options.CheckLabels, queries sharing a label must also agree.
//
// The driver, database connection and server lifetime live in the command
// (hack/slt); this package has no I/O beyond the Conn it is given, which is
// what lets its tests run without a server.
package slt
