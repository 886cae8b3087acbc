"""The InferenceGateway composition: a fleet's front door on one of its clusters."""
