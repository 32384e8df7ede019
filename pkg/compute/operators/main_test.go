package operators

import (
	"flag"
	"os"
	"testing"
)

// TestMain keeps rapid from writing fail files into the source tree unless
// asked (-rapid.nofailfile=false); a failure prints the seed that replays it.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "rapid.nofailfile" })
	if !given {
		if err := flag.Set("rapid.nofailfile", "true"); err != nil {
			panic(err) // the flag is rapid's; its absence is a build problem
		}
	}
	os.Exit(m.Run())
}
