package enginetest

import (
	"flag"
	"os"
	"testing"
)

// defaultChecks is how many cases each property runs when -rapid.checks is
// not given: rapid's default of 100 misses rare plan shapes, and a case
// costs about a millisecond here.
const defaultChecks = "1000"

// TestMain applies the package defaults for rapid's flags unless they are
// given: more checks, and no fail files written into the source tree (a
// failure prints the seed that replays it; pass -rapid.nofailfile=false to
// get the file).
func TestMain(m *testing.M) {
	flag.Parse()
	given := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, value := range map[string]string{"rapid.checks": defaultChecks, "rapid.nofailfile": "true"} {
		if given[name] {
			continue
		}
		if err := flag.Set(name, value); err != nil {
			panic(err) // the flags are rapid's; their absence is a build problem
		}
	}
	os.Exit(m.Run())
}
