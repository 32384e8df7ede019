// Package archcheck holds the test that keeps the package map of
// docs/design/architecture.md true: it lists every package's imports with
// `go list` and fails when an import crosses a line the map forbids (the
// engine importing SQL, the coordinator, storage, Kubernetes or gRPC;
// placement importing the protocol; anything below cmd importing a binary).
//
// The rules live in rules.go as data, so that the document and the check
// can be read side by side; a new package that no rule names is allowed to
// import anything below it, and the test says which rule each failure broke.
// A second test (names.go) fails when the map does not name a package that
// `go list ./...` finds, so every new package is placed on the map.
package archcheck
