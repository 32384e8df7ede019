package certs

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Defaults of an Issuer's validities and check interval.
const (
	DefaultLeafValidity = 90 * 24 * time.Hour
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultInterval     = time.Minute
)

// Clock tells the time; tests inject a fake one.
type Clock interface{ Now() time.Time }

// Issuer keeps the deployment's authority in the Secret CASecret of
// Namespace and issues leaf Secrets under it: the controller's
// (ControllerSecret, kept by Start) and the replicas' (EnsureLeaf, called
// by the reconciler). Only the leader runs it.
type Issuer struct {
	// Client writes Secrets; Reader reads them live (Namespace may be
	// outside the manager's cache).
	Client           client.Client
	Reader           client.Reader
	Clock            Clock
	Namespace        string
	CASecret         string
	ControllerSecret string
	// Labels go on the Secrets the Issuer creates in Namespace.
	Labels                   map[string]string
	LeafValidity, CAValidity time.Duration
	Interval                 time.Duration

	mu sync.Mutex
	ca *Authority
}

func (i *Issuer) leafValidity() time.Duration {
	if i.LeafValidity > 0 {
		return i.LeafValidity
	}
	return DefaultLeafValidity
}

func (i *Issuer) caValidity() time.Duration {
	if i.CAValidity > 0 {
		return i.CAValidity
	}
	return DefaultCAValidity
}

// due says whether the authority must be renewed at now.
func (a *Authority) due(now time.Time) bool {
	if a == nil || len(a.cas) == 0 || !now.Before(renewAt(a.cas[0].cert)) {
		return true
	}
	for _, c := range a.cas {
		if !now.Before(c.cert.NotAfter) {
			return true
		}
	}
	return false
}

// Authority returns the deployment's authority, reading its Secret on
// first use and creating or renewing it when due.
func (i *Issuer) Authority(ctx context.Context) (*Authority, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	now := i.Clock.Now()
	if !i.ca.due(now) {
		return i.ca, nil
	}
	key := types.NamespacedName{Namespace: i.Namespace, Name: i.CASecret}
	var s corev1.Secret
	err := i.Reader.Get(ctx, key, &s)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("read the internal CA secret %s: %w", key, err)
	}
	a, err := ParseAuthority(s.Data)
	if err != nil {
		return nil, fmt.Errorf("internal CA secret %s: %w", key, err)
	}
	a, changed, err := a.Renew(now, i.caValidity())
	if err != nil {
		return nil, err
	}
	if changed {
		data, err := a.Data()
		if err != nil {
			return nil, err
		}
		if err := i.write(ctx, key, &s, exists, data, corev1.SecretTypeOpaque, i.Labels, nil); err != nil {
			return nil, err
		}
		log.FromContext(ctx).Info("Wrote the internal CA", "secret", key.String(), "authorities", len(a.cas))
	}
	i.ca = a
	return a, nil
}

// EnsureLeaf keeps the leaf Secret want (its name, namespace, labels and
// owner references) issued for name under the authority: observed is the
// Secret as read (nil when absent). It writes only when Plan says so and
// returns when to look again.
func (i *Issuer) EnsureLeaf(ctx context.Context, want, observed *corev1.Secret, name string) (time.Time, error) {
	a, err := i.Authority(ctx)
	if err != nil {
		return time.Time{}, err
	}
	var data map[string][]byte
	if observed != nil {
		data = observed.Data
	}
	fresh, next, err := Plan(a, data, i.Clock.Now(), name, i.leafValidity())
	if err != nil || fresh == nil {
		return next, err
	}
	key := client.ObjectKeyFromObject(want)
	s := want.DeepCopy()
	if observed != nil {
		s = observed.DeepCopy()
	}
	if err := i.write(ctx, key, s, observed != nil, fresh, corev1.SecretTypeTLS, want.Labels, want.OwnerReferences); err != nil {
		return time.Time{}, err
	}
	log.FromContext(ctx).Info("Issued an internal TLS certificate", "secret", key.String())
	return next, nil
}

// write creates the Secret key or updates s (as read, with its resource
// version, so a concurrent writer makes this fail and retry) to data.
func (i *Issuer) write(ctx context.Context, key types.NamespacedName, s *corev1.Secret, exists bool,
	data map[string][]byte, typ corev1.SecretType, labels map[string]string, owners []metav1.OwnerReference) error {
	s.Name, s.Namespace, s.Data = key.Name, key.Namespace, data
	if s.Labels == nil && len(labels) > 0 {
		s.Labels = map[string]string{}
	}
	for k, v := range labels {
		s.Labels[k] = v
	}
	if !exists {
		s.Type, s.OwnerReferences = typ, owners
		if err := i.Client.Create(ctx, s); err != nil {
			return fmt.Errorf("create secret %s: %w", key, err)
		}
		return nil
	}
	if err := i.Client.Update(ctx, s); err != nil {
		return fmt.Errorf("update secret %s: %w", key, err)
	}
	return nil
}

// Start keeps the authority and the controller's Secret current until ctx
// ends, checking every Interval (a manager Runnable; it needs the lease).
func (i *Issuer) Start(ctx context.Context) error {
	interval := i.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	logger := log.FromContext(ctx).WithName("internal-tls")
	ctx = log.IntoContext(ctx, logger)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := i.EnsureController(ctx); err != nil {
			logger.Error(err, "Keeping the internal TLS certificates")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// EnsureController keeps the controller's leaf Secret current.
func (i *Issuer) EnsureController(ctx context.Context) error {
	if i.ControllerSecret == "" {
		_, err := i.Authority(ctx)
		return err
	}
	key := types.NamespacedName{Namespace: i.Namespace, Name: i.ControllerSecret}
	var s corev1.Secret
	var observed *corev1.Secret
	switch err := i.Reader.Get(ctx, key, &s); {
	case err == nil:
		observed = &s
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read the controller's internal TLS secret %s: %w", key, err)
	}
	want := &corev1.Secret{}
	want.Name, want.Namespace, want.Labels = key.Name, key.Namespace, i.Labels
	_, err := i.EnsureLeaf(ctx, want, observed, "controller")
	return err
}
