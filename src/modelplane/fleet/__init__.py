"""The fleet: InferenceClusters, InferenceClasses, ModelDeployments and the scheduler between them."""
