"""The InferenceClass composition: data only, it composes nothing."""
