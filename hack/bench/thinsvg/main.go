package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tandemdb/tandem/hack/bench/internal/plot"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./hack/bench/thinsvg FILE.svg...")
		os.Exit(2)
	}
	for _, path := range os.Args[1:] {
		if err := thin(path); err != nil {
			fmt.Fprintf(os.Stderr, "thinsvg: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func thin(path string) error {
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	before, err := in.Stat()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".thinsvg-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	removed, err := plot.Rethin(in, tmp)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	after, err := os.Stat(tmp.Name())
	if err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), before.Mode().Perm()); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes -> %d bytes (%d points or path moves dropped)\n", path, before.Size(), after.Size(), removed)
	return nil
}
