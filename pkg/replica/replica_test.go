package replica

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/tandemdb/tandem/pkg/compute/runtime"
)

type nopMetrics struct{}

func (nopMetrics) WorkerStep(int, time.Duration)             {}
func (nopMetrics) Command(string)                            {}
func (nopMetrics) PeekFinished(string, time.Duration)        {}
func (nopMetrics) ArrangementMaintenance(int, time.Duration) {}

// fabrics records which runtimes' meshes were connected and closed; it
// fails the connection of role fail.
type fabrics struct {
	fail           runtime.Role
	opened, closed []runtime.Role
}

func (f *fabrics) connect(role runtime.Role) (runtime.Fabric, func(), error) {
	if role == f.fail {
		return nil, nil, errors.New("peer unreachable")
	}
	f.opened = append(f.opened, role)
	return nil, func() { f.closed = append(f.closed, role) }, nil
}

func TestNew(t *testing.T) {
	none := runtime.Role(-1)
	tests := []struct {
		name        string
		two         bool
		fail        runtime.Role
		wantErr     bool
		wantRoles   []runtime.Role
		wantClosed  []runtime.Role // after Stop and Close, or after a failed New
		wantMux     bool
		wantSrvRole runtime.Role
	}{
		{name: "solo", fail: none, wantRoles: []runtime.Role{runtime.Solo}, wantClosed: []runtime.Role{runtime.Solo}, wantSrvRole: runtime.Solo},
		{name: "two runtimes", two: true, fail: none, wantMux: true, wantSrvRole: runtime.Maintenance,
			wantRoles:  []runtime.Role{runtime.Maintenance, runtime.Interactive},
			wantClosed: []runtime.Role{runtime.Interactive, runtime.Maintenance}},
		{name: "interactive mesh fails", two: true, fail: runtime.Interactive, wantErr: true,
			wantClosed: []runtime.Role{runtime.Maintenance}},
		{name: "solo mesh fails", fail: runtime.Solo, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fabrics{fail: tt.fail}
			cfg := Config{Workers: 1, Processes: 1, TwoRuntimes: tt.two, Fabric: f.connect,
				Metrics: func(runtime.Role) runtime.Metrics { return nopMetrics{} }, Log: logr.Discard()}
			if got := cfg.Role(); got != tt.wantSrvRole && !tt.wantErr {
				t.Errorf("Role() = %v, want %v", got, tt.wantSrvRole)
			}
			p, err := New(cfg)
			if tt.wantErr {
				if err == nil {
					t.Fatal("New succeeded, want an error")
				}
				if !slices.Equal(f.closed, tt.wantClosed) {
					t.Errorf("after a failed New closed %v, want %v", f.closed, tt.wantClosed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var roles []runtime.Role
			for _, rt := range p.Runtimes {
				roles = append(roles, rt.Role())
			}
			if !slices.Equal(roles, tt.wantRoles) {
				t.Errorf("runtimes %v, want %v", roles, tt.wantRoles)
			}
			if (p.Multiplexer != nil) != tt.wantMux || (p.Registry != nil) != tt.wantMux {
				t.Errorf("multiplexer %v registry %v, want both set: %v", p.Multiplexer != nil, p.Registry != nil, tt.wantMux)
			}
			if p.Server == nil {
				t.Error("no server")
			}
			p.Start(t.Context())
			p.Stop()
			p.Close()
			if !slices.Equal(f.closed, tt.wantClosed) {
				t.Errorf("closed %v, want %v", f.closed, tt.wantClosed)
			}
		})
	}
}
