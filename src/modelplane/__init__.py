"""Modelplane: a Crossplane v2 control plane for AI inference fleets."""
