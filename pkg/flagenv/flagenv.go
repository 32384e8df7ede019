package flagenv

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// Name returns the environment variable of flag name: TANDEM_ and the
// name in upper case with dashes as underscores.
func Name(flagName string) string {
	return "TANDEM_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Parse sets every flag of fs from its environment variable (getenv, see
// Name), then parses args over them. It fails with every environment
// value that does not parse, with fs.Parse's error (flag.ErrHelp for
// -help), or when arguments remain after the flags.
func Parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(Name(f.Name)); v != "" {
			if err := f.Value.Set(v); err != nil {
				envErr = errors.Join(envErr, fmt.Errorf("%s=%q: %w", Name(f.Name), v, err))
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}
