"""Composers, one package per composite kind (``compose/<kind>/composer.py`` is its entry point);
what several kinds share lives once in ``compose/shared/``, which imports no kind. At this level
sit only the modules that see every kind: ``registry`` lists every composer, ``admission`` admits
what they read, ``pods_revision`` digests what the replica composer adds to pods."""
