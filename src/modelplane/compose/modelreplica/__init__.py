"""The ModelReplica composition: serving workloads, routing and status on the pinned cluster."""
