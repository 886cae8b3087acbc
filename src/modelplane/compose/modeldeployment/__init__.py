"""The ModelDeployment composition: place every replica, stamp each into a ModelReplica."""
