"""Conformance: each rule is an upstream controller's behaviour Modelplane relies on, cited by the
upstream file and release it comes from, checked over the composed objects of every fleet in
``fleets`` (every example and the generated fleets). One test module per upstream project."""
