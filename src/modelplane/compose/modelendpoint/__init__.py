"""The ModelEndpoint composition: one backend a ModelService can route to."""
