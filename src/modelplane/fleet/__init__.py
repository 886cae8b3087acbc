"""The fleet: InferenceClusters, InferenceClasses, ModelDeployments and their scheduler."""
