"""Composers, one package per composite kind (``compose/<kind>/composer.py`` is its entry point);
what several kinds share lives here once: remote objects (``remote``) and the cache contract
(``cache``). ``registry`` lists every composer."""
