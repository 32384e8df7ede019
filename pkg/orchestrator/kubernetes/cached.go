package kubernetes

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1alpha1 "github.com/tandemdb/tandem/apis/compute/v1alpha1"
)

// NewForConfig returns an orchestrator whose reads are served by an informer-backed cache
// of the ComputeReplicas in opts.Namespace, started here and stopped when ctx is done.
//
// The orchestrator interface has no change notification: the controller re-reads Status on
// every reconnect attempt (with backoff) and ListReplicas when it recovers. With a watch
// feeding a local cache those reads cost no API-server round trip, so polling them is cheap
// and stays correct across watch restarts, which a notification hook would have to replay.
func NewForConfig(ctx context.Context, cfg *rest.Config, opts Options) (*Orchestrator, error) {
	if opts.Namespace == "" {
		return nil, errors.New("kubernetes orchestrator: a namespace is required")
	}
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("kubernetes orchestrator: register types: %w", err)
	}
	ca, err := cache.New(cfg, cache.Options{
		Scheme:            scheme,
		DefaultNamespaces: map[string]cache.Config{opts.Namespace: {}},
		// The orchestrator never reads managed fields; dropping them halves the cache.
		DefaultTransform: cache.TransformStripManagedFields(),
		// Only ComputeReplicas are read; anything else must not start an informer silently.
		ReaderFailOnMissingInformer: true,
	})
	if err != nil {
		return nil, fmt.Errorf("kubernetes orchestrator: new cache: %w", err)
	}
	if _, err := ca.GetInformer(ctx, &v1alpha1.ComputeReplica{}); err != nil {
		return nil, fmt.Errorf("kubernetes orchestrator: informer for ComputeReplicas: %w", err)
	}
	started := make(chan error, 1)
	go func() { started <- ca.Start(ctx) }()
	// An unreachable API server or missing CRD would otherwise block here forever.
	syncCtx, cancel := context.WithTimeout(ctx, cmp.Or(opts.SyncTimeout, DefaultSyncTimeout))
	defer cancel()
	if !ca.WaitForCacheSync(syncCtx) {
		select {
		case err := <-started:
			return nil, fmt.Errorf("kubernetes orchestrator: cache stopped before syncing: %w", err)
		default:
			return nil, fmt.Errorf("kubernetes orchestrator: ComputeReplicas in %s did not sync (API server reachable? CRD installed?): %w",
				opts.Namespace, context.Cause(syncCtx))
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: ca}})
	if err != nil {
		return nil, fmt.Errorf("kubernetes orchestrator: new client: %w", err)
	}
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("kubernetes orchestrator: new API reader: %w", err)
	}
	opts.APIReader = direct
	if opts.Recorder == nil {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, fmt.Errorf("kubernetes orchestrator: new clientset for events: %w", err)
		}
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		b.StartRecordingToSink(ctx.Done())
		opts.Recorder = b.NewRecorder(scheme, cmp.Or(opts.ControllerName, DefaultControllerName))
	}
	return New(c, opts)
}
