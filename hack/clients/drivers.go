package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// drivers says where hack/client-drivers.sh installed the drivers.
type drivers struct {
	python   string // interpreter that imports psycopg2
	nodePath string // NODE_PATH that resolves require('pg')
}

// installDrivers runs hack/client-drivers.sh (idempotent) and reads its
// "key=value" lines.
func installDrivers(ctx context.Context, root string) (drivers, error) {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "client-drivers.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return drivers{}, fmt.Errorf("hack/client-drivers.sh: %w", err)
	}
	return parseDrivers(string(out))
}

func parseDrivers(out string) (drivers, error) {
	var d drivers
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		switch k {
		case "python":
			d.python = v
		case "node_path":
			d.nodePath = v
		}
	}
	if d.python == "" || d.nodePath == "" {
		return d, fmt.Errorf("hack/client-drivers.sh printed no python= and node_path= lines:\n%s", out)
	}
	return d, nil
}

// script is one driver's round-trip script under test/clients.
type script struct {
	name string // psycopg2, node-postgres
	// cmd builds its command against t, bound to ctx.
	cmd func(ctx context.Context, d drivers, root string, t target) *exec.Cmd
}

var scripts = []script{
	{"psycopg2", func(ctx context.Context, d drivers, root string, t target) *exec.Cmd {
		return exec.CommandContext(ctx, d.python, filepath.Join(root, "test", "clients", "psycopg2_types.py"), t.dsn())
	}},
	{"node-postgres", func(ctx context.Context, d drivers, root string, t target) *exec.Cmd {
		c := exec.CommandContext(ctx, "node", filepath.Join(root, "test", "clients", "node_pg_types.js"), t.url())
		// TZ fixes how node-postgres turns date and timestamp into Date.
		c.Env = append(os.Environ(), "NODE_PATH="+d.nodePath, "TZ=UTC")
		return c
	}},
}

// runScript runs one script against t; its output is returned either way.
func runScript(ctx context.Context, s script, d drivers, root string, t target) (string, error) {
	out, err := s.cmd(ctx, d, root, t).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s against %s: %w", s.name, t.name, err)
	}
	return string(out), nil
}
