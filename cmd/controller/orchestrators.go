package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tandemdb/tandem/pkg/catalog"
	"github.com/tandemdb/tandem/pkg/orchestrator"
	k8sorch "github.com/tandemdb/tandem/pkg/orchestrator/kubernetes"
	"github.com/tandemdb/tandem/pkg/orchestrator/process"
)

// replicaOrchestrator is the orchestrator run uses, with how to stop it and
// a line for the startup banner.
type replicaOrchestrator struct {
	orchestrator.Orchestrator
	// close stops what the orchestrator runs (local replica processes);
	// replicas on Kubernetes keep running without the controller.
	close func()
	// banner says where replicas run; empty for local processes, whose
	// logs the data directory line already shows.
	banner string
}

// newOrchestrator builds the orchestrator cfg selects. Reads and watches of
// the kubernetes orchestrator last until ctx ends.
func newOrchestrator(ctx context.Context, cfg *config, log logr.Logger, storageAddr string, replicaEnv []string, cat *catalog.Catalog) (*replicaOrchestrator, error) {
	switch cfg.Orchestrator {
	case "kubernetes":
		return newKubernetesOrchestrator(ctx, cfg, log, cat)
	case "process":
		orch, err := process.New(process.Config{
			ReplicaBinary: cfg.ReplicaBinary,
			Log:           log,
			LogDir:        filepath.Join(cfg.DataDir, "logs"),
			// Replicas find table storage through this variable, and
			// their internal certificate through replicaEnv.
			Env: append([]string{"TANDEM_STORAGE_ADDR=" + storageAddr}, replicaEnv...),
		})
		if err != nil {
			return nil, err
		}
		return &replicaOrchestrator{Orchestrator: orch, close: func() { _ = orch.Close() }}, nil
	default:
		return nil, fmt.Errorf("unknown orchestrator %q", cfg.Orchestrator)
	}
}

func newKubernetesOrchestrator(ctx context.Context, cfg *config, log logr.Logger, cat *catalog.Catalog) (*replicaOrchestrator, error) {
	k := cfg.Kubernetes
	restCfg, err := kubernetesRESTConfig(cfg)
	if err != nil {
		return nil, err
	}
	restCfg = rest.CopyConfig(restCfg)
	restCfg.UserAgent = "tandem-controller"
	orch, err := k8sorch.NewForConfig(ctx, restCfg, k8sorch.Options{
		Namespace:      k.Namespace,
		ControllerName: k.ControllerName,
		Template:       k8sorch.ReplicaTemplate{Image: k.ReplicaImage, ImagePullPolicy: k.ReplicaImagePullPolicy},
		// Replicas users apply for a cluster of the catalog are adopted.
		KnownCluster: func(cluster string) bool {
			cls, err := cat.Clusters()
			if err != nil {
				log.Error(err, "Failed to read the catalog's clusters; not adopting", "cluster", cluster)
				return false
			}
			return slices.ContainsFunc(cls, func(c catalog.Cluster) bool { return c.Name == cluster })
		},
		Log: log,
	})
	if err != nil {
		return nil, err
	}
	return &replicaOrchestrator{Orchestrator: orch, close: func() {},
		banner: fmt.Sprintf("ComputeReplicas in namespace %s (image %s)", k.Namespace, k.ReplicaImage)}, nil
}

// kubernetesRESTConfig is the API server connection: the test hook's, the
// kubeconfig file's, or the pod's service account.
func kubernetesRESTConfig(cfg *config) (*rest.Config, error) {
	switch {
	case cfg.restConfig != nil:
		return cfg.restConfig, nil
	case cfg.Kubernetes.Kubeconfig != "":
		rc, err := clientcmd.BuildConfigFromFlags("", cfg.Kubernetes.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig=%s: %w", cfg.Kubernetes.Kubeconfig, err)
		}
		return rc, nil
	default:
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster Kubernetes credentials (pass --kubeconfig outside a cluster): %w", err)
		}
		return rc, nil
	}
}
