package sql

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tandemdb/tandem/pkg/sql/planner"
	"github.com/tandemdb/tandem/pkg/sql/sqlerr"
)

// Session variable names Tandem gives meaning to.
const (
	VarCluster              = "cluster"
	VarClusterReplica       = "cluster_replica"
	VarTransactionIsolation = "transaction_isolation"
	// VarStatementTimeout bounds how long Execute may take (see
	// Session.Execute); 0 means no limit.
	VarStatementTimeout = "statement_timeout"
	// VarMaxRecursionIterations bounds the rounds of a WITH RECURSIVE
	// query planned in the session (planner.DefaultRecursionLimit).
	VarMaxRecursionIterations = "max_recursion_iterations"
)

// Transaction isolation levels.
const (
	IsolationSerializable       = "serializable"
	IsolationStrictSerializable = "strict serializable"
)

// sessionVar describes one session variable: its default and how a new
// value is checked and normalised.
type sessionVar struct {
	def string
	// reportStatus says the value is sent to the client in ParameterStatus
	// at startup and on change, as Postgres does for these names.
	reportStatus bool
	check        func(string) (string, error)
}

func anyValue(s string) (string, error) { return s, nil }

// durationValue accepts what Postgres accepts for a time parameter whose
// unit is milliseconds: a bare integer (ms) or a number with one of the
// units us, ms, s, min, h, d. "0" disables the limit.
func durationValue(s string) (string, error) {
	if _, err := parseDurationMS(s); err != nil {
		return "", err
	}
	return strings.TrimSpace(s), nil
}

// parseDurationMS parses a durationValue.
func parseDurationMS(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	v, err := strconv.ParseFloat(num, 64)
	scale, ok := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[unit]
	if err != nil || !ok || v < 0 || v*float64(scale) > float64(math.MaxInt32)*float64(time.Millisecond) {
		return 0, sqlerr.Errorf(sqlerr.InvalidParameterValue,
			"invalid value for parameter %q: %q (a duration such as 5000, 500ms, 5s or 1min; 0 disables it)", VarStatementTimeout, s)
	}
	return time.Duration(v * float64(scale)), nil
}

// positiveIntValue accepts an integer from 1 to 2^31-1.
func positiveIntValue(s string) (string, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil || n < 1 {
		return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value %q (an integer from 1 to %d)", s, math.MaxInt32)
	}
	return strconv.FormatInt(n, 10), nil
}

func fixedValue(allowed ...string) func(string) (string, error) {
	return func(s string) (string, error) {
		for _, a := range allowed {
			if strings.EqualFold(s, a) {
				return a, nil
			}
		}
		return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value %q (allowed: %s)", s, strings.Join(allowed, ", "))
	}
}

func isolationValue(s string) (string, error) {
	switch strings.ToLower(strings.Join(strings.Fields(s), " ")) {
	case "serializable":
		return IsolationSerializable, nil
	case "strict serializable", "strict_serializable":
		return IsolationStrictSerializable, nil
	case "read committed", "repeatable read", "read uncommitted":
		// Postgres clients set these; every read here is at least
		// serializable, which is allowed to stand in for weaker levels.
		return IsolationSerializable, nil
	}
	return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for transaction_isolation: %q (serializable or strict serializable)", s)
}

// sessionVars is the table of session variables. It is a function, not a
// package-level map, so that no package state can be mutated.
func sessionVars() map[string]sessionVar {
	return map[string]sessionVar{
		VarCluster:                    {def: "default", check: anyValue},
		VarClusterReplica:             {def: "", check: anyValue},
		VarTransactionIsolation:       {def: IsolationStrictSerializable, check: isolationValue},
		"application_name":            {def: "", reportStatus: true, check: anyValue},
		"client_encoding":             {def: "UTF8", reportStatus: true, check: fixedValue("UTF8")},
		"datestyle":                   {def: "ISO, MDY", reportStatus: true, check: anyValue},
		VarTimeZone:                   {def: "UTC", reportStatus: true, check: timeZoneValue},
		"intervalstyle":               {def: "postgres", reportStatus: true, check: fixedValue("postgres")},
		"extra_float_digits":          {def: "1", check: anyValue},
		"search_path":                 {def: "public", check: anyValue},
		"standard_conforming_strings": {def: "on", reportStatus: true, check: fixedValue("on")},
		VarStatementTimeout:           {def: "0", check: durationValue},
		"server_version":              {def: ServerVersion, reportStatus: true, check: nil},
		"server_version_num":          {def: ServerVersionNum, check: nil},
		"server_encoding":             {def: "UTF8", reportStatus: true, check: nil},
		"integer_datetimes":           {def: "on", reportStatus: true, check: nil},
		"is_superuser":                {def: "off", reportStatus: true, check: nil},
		"max_identifier_length":       {def: "63", check: nil},
		"database":                    {def: Database, check: nil},
		VarMaxRecursionIterations:     {def: strconv.Itoa(planner.DefaultRecursionLimit), check: positiveIntValue},
	}
}

// The server's identity as reported to clients. Drivers and psql parse
// server_version to choose their catalog queries, so it names a Postgres
// version whose catalog shape the pg_catalog emulation follows.
const (
	ServerVersion    = "16.0 (Tandem)"
	ServerVersionNum = "160000"
	Database         = "tandem"
)

// Vars holds one session's variables. It is owned by its session and not
// safe for concurrent use.
type Vars struct {
	defs   map[string]sessionVar
	values map[string]string
}

func newVars() *Vars { return &Vars{defs: sessionVars(), values: map[string]string{}} }

// Get returns a variable's value.
func (v *Vars) Get(name string) (string, error) {
	name = strings.ToLower(name)
	d, ok := v.defs[name]
	if !ok {
		return "", sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if val, ok := v.values[name]; ok {
		return val, nil
	}
	return d.def, nil
}

// Set changes a variable, returning whether it is reported to clients.
func (v *Vars) Set(name, value string) (report bool, err error) {
	name = strings.ToLower(name)
	d, err := v.changeable(name)
	if err != nil {
		return false, err
	}
	val, err := d.check(value)
	if err != nil {
		return false, err
	}
	v.values[name] = val
	return d.reportStatus, nil
}

// changeable returns the definition of the variable named (lower case),
// failing when there is none (42704) or it cannot be changed (55P02).
func (v *Vars) changeable(name string) (sessionVar, error) {
	d, ok := v.defs[name]
	if !ok {
		return sessionVar{}, sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	if d.check == nil {
		return sessionVar{}, sqlerr.Errorf(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed", name)
	}
	return d, nil
}

// Reset restores a variable's default.
func (v *Vars) Reset(name string) (report bool, err error) {
	name = strings.ToLower(name)
	d, err := v.changeable(name)
	if err != nil {
		return false, err
	}
	delete(v.values, name)
	return d.reportStatus, nil
}

// Reported returns the variables sent as ParameterStatus at startup, by
// name, with the names in the case Postgres uses on the wire.
func (v *Vars) Reported() map[string]string {
	out := map[string]string{}
	for name, d := range v.defs {
		if d.reportStatus {
			val, _ := v.Get(name)
			out[WireName(name)] = val
		}
	}
	return out
}

// WireName returns the name under which a reported variable is sent.
func WireName(name string) string {
	switch name {
	case "datestyle":
		return "DateStyle"
	case "timezone":
		return "TimeZone"
	case "intervalstyle":
		return "IntervalStyle"
	}
	return name
}

// All returns every variable and its value, sorted by name (SHOW ALL).
func (v *Vars) All() [][2]string {
	names := make([]string, 0, len(v.defs))
	for n := range v.defs {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([][2]string, 0, len(names))
	for _, n := range names {
		val, _ := v.Get(n)
		out = append(out, [2]string{n, val})
	}
	return out
}
