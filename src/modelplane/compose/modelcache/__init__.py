"""The ModelCache composition: stage a model's weights once per selected cluster."""
