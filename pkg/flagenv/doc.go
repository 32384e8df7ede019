// Package flagenv parses a binary's flags the way every Tandem binary
// does: a flag not given on the command line takes its value from the
// environment variable TANDEM_<FLAG> (upper case, dashes as underscores),
// so a Kubernetes manifest and a command line configure a process alike.
//
// Invariants:
//   - The command line wins over the environment: environment values are
//     set first, then the arguments are parsed over them.
//   - Every environment variable that does not parse is reported, with its
//     name and value, in one error; nothing is half-applied silently.
//   - Positional arguments are refused (no Tandem binary takes any).
//
// It imports nothing of Tandem.
package flagenv
