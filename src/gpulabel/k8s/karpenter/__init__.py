"""Karpenter (sigs.k8s.io/karpenter v1.14.1): its objects and the rules it provisions nodes by."""
