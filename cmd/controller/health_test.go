package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// /healthz follows the SQL listener: ok while it accepts, 503 with the
// reason once it stopped for good.
func TestHealthzReportsDeadListener(t *testing.T) {
	for _, tc := range []struct {
		name   string
		health error
		code   int
		body   string
	}{
		{"serving", nil, http.StatusOK, "ok"},
		{"listener dead", errors.New("pgwire: accept: listener is broken"), http.StatusServiceUnavailable, "listener is broken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHTTPHandler(nil, nil, prometheus.NewRegistry(), func() error { return tc.health })
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.body) {
				t.Fatalf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tc.code, tc.body)
			}
		})
	}
}
