// Package reconciler is the controller-runtime reconciler for ComputeReplica resources.
//
// It reconciles a whole cluster at a time (the request names a namespace and a
// spec.clusterName), because the one-replica-at-a-time rollout rule is about a cluster, and
// a workqueue never processes one key concurrently: two replicas of a cluster can never be
// started by two concurrent reconciles. For each replica, in name order, it renders the
// Service, StatefulSet and PodDisruptionBudget (package render), observes the StatefulSet and
// pods, asks package rollout what to do, and then acts in an order that survives a crash at
// any point:
//
//  1. status (with the rollout's start time) is written before any pod is deleted, so a
//     restarted operator sees the rollout as under way and finishes it;
//  2. the StatefulSet is applied only when the policy says so (its template changes only at
//     the start of a rollout);
//  3. all the replica's outdated pods are deleted together, each with its observed UID as a
//     precondition, so a successor the StatefulSet controller created under the same name
//     is never deleted on the strength of a lagging cache.
//
// Bad input never makes the reconcile fail (a failing reconcile would hold every replica of
// the cluster behind the rate limiter): a spec that cannot be rendered, or whose rendered
// objects the API server refuses (checked with a server-side dry run whenever the pod
// template changes, before any rollout starts), is reported on that replica as
// Degraded=True and Progressing=False with reason InvalidSpec and one warning event, its
// running pods are left alone, and the other replicas are reconciled as usual. Likewise a
// Service, StatefulSet or PDB of the replica's name that the replica does not control is
// never taken over (applying would rewrite it and make the replica's deletion garbage-collect
// it): the replica reports reason NameConflict instead.
//
// The replicas of the cluster are read live from the API server (not the cache) when
// deciding, so a rollout just started is never missed because of a stale cache. Every
// write uses server-side apply with the operator's field owner; the status apply covers
// only the operator's fields and conditions, never the controller's Hydrated condition.
//
// The PodDisruptionBudgets are decided for the whole cluster after the rollouts (package
// disruption, drain.go): a budget that must close is applied before anything else of the
// pass, so that two replicas of a cluster never have open budgets at once.
//
// A pass that changes nothing writes nothing (diff.go): an owned object is applied only when
// the observed one lacks a field the apply would set or holds another value there, and
// status only when one of the operator's fields or conditions (apart from transition times)
// would change.
//
// With internal TLS (render.Options.InternalTLS) each replica also has a Secret
// <replica>-internal-tls, owned by it, that a LeafIssuer (package certs) issues before the
// StatefulSet is applied and renews when due; the pass is requeued for the renewal. A
// renewal rewrites only the Secret, never the pod template, so it rolls nothing; a Secret of
// that name the replica does not control is a NameConflict like the others. The metrics
// (metrics.go) also count the container restarts of each replica's pods as their restart
// counts grow, and expose whether the controller reports the replica hydrating.
package reconciler
