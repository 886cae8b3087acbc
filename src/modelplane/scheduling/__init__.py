"""The fleet scheduler: pure, it knows nothing of protobuf or composers.

``schedule(deployment, clusters, classes, replicas) -> Schedule`` is the entry point
(``scheduler``); ``placement`` holds the types it answers with. Inside: the deployment and the
fleet as parsed (``demand``, ``fleet``), the device and capacity model (``devices``,
``capacity``), the options and the search (``options``, ``search``), the policy over existing
replicas (``policy``), the fill that spreads new ones (``fill``) and the trace behind
``modelplane explain`` (``explain``).
"""
