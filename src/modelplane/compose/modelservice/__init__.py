"""The ModelService composition: one address for a model across the fleet."""
