"""Offline Kubernetes API machinery: names, structural schemas, CEL, quantities."""
