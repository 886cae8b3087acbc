"""What several composite kinds share, once: the Object wrapping for workload clusters
(``remote``), the ModelCache contract (``cache``), the front door's names (``frontdoor``),
evidence that something is gone (``evidence``), and the other small agreements between kinds.
No module here imports a kind's package."""
