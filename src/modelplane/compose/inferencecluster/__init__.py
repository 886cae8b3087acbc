"""The InferenceCluster composition: reach a cluster and publish what it offers."""
