package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Group is the API group of every type in this package.
const Group = "compute.tandem.dev"

// Version is the API version of every type in this package.
const Version = "v1alpha1"

// GroupVersion returns the group and version of this package's types.
func GroupVersion() schema.GroupVersion { return schema.GroupVersion{Group: Group, Version: Version} }

// Kind is the kind of ComputeReplica objects.
const Kind = "ComputeReplica"

// AddToScheme registers this package's types with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion(), &ComputeReplica{}, &ComputeReplicaList{})
	metav1.AddToGroupVersion(s, GroupVersion())
	return nil
}
