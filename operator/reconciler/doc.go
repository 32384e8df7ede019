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
//  3. all the replica's outdated pods are deleted together.
//
// The replicas of the cluster are read live from the API server (not the cache) when
// deciding, so a rollout just started is never missed because of a stale cache. Every
// write uses server-side apply with the operator's field owner; the status apply covers
// only the operator's fields and conditions, never the controller's Hydrated condition.
package reconciler
