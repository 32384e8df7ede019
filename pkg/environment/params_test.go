package environment

import "testing"

func TestNormalizeLimitParams(t *testing.T) {
	for _, tc := range []struct {
		name, value, want string
		wantErr           bool
	}{
		{"max_result_size", "1048576", "1048576", false},
		{"max_result_size", "1MB", "1048576", false},
		{"max_result_size", "2 GB", "2147483648", false},
		{"max_result_size", "64kB", "65536", false},
		{"max_result_size", "0", "0", false},
		{"max_result_size", "-1", "", true},
		{"max_result_size", "lots", "", true},
		{"max_result_size", "99999999TB", "", true},
		{"max_query_memory", "256MB", "268435456", false},
		{"max_query_memory", "1.5GB", "", true},
		{"max_connections", "100", "100", false},
		{"max_connections", " 7 ", "7", false},
		{"max_connections", "0", "", true},
		{"max_connections", "262144", "", true},
		{"max_connections", "many", "", true},
		{"max_concurrent_peeks", "0", "0", false},
		{"max_concurrent_peeks", "16", "16", false},
		{"max_concurrent_peeks", "-1", "", true},
		{"max_concurrent_one_shot_reads", "4", "4", false},
		{"max_concurrent_one_shot_reads", "few", "", true},
		{"max_queued_reads", "0", "0", false},
		{"max_queued_reads", "-5", "", true},
		{"arrange_step_updates", "0", "0", false},
		{"arrange_step_updates", "-1", "", true},
		{"worker_step_budget_ms", "0", "0", false},
		{"worker_step_budget_ms", "25", "25", false},
		{"worker_step_budget_ms", "-1", "", true},
	} {
		got, err := normalizeParam(tc.name, tc.value)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("normalizeParam(%s, %q) = %q, %v; want %q (error %v)", tc.name, tc.value, got, err, tc.want, tc.wantErr)
		}
	}
	for _, name := range []string{"max_result_size", "max_query_memory", "max_connections",
		"max_concurrent_peeks", "max_concurrent_one_shot_reads", "max_queued_reads", "arrange_step_updates", "worker_step_budget_ms"} {
		if _, err := normalizeParam(name, params[name]); err != nil {
			t.Errorf("default of %s (%q) is invalid: %v", name, params[name], err)
		}
	}
}
