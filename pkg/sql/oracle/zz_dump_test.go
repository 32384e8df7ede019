package oracle

import (
	"os"
	"strconv"
	"testing"
)

func TestZZDump(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("S"))
	n, _ := strconv.Atoi(os.Getenv("N"))
	i, _ := strconv.Atoi(os.Getenv("I"))
	os.Stdout.WriteString(shapesScripts(uint64(seed), n)[i].text)
}
