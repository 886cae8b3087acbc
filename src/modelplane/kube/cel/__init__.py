"""CEL as the Kubernetes API server runs it, checks it and prices it.

- ``runtime``: compiling and evaluating expressions in the Kubernetes dialect (its docstring is
  the API summary), for admission rules and DRA device selectors;
- ``names``: how CEL names an object's properties (escaping);
- ``schematypes``: rules type-checked against their schema, as when a CRD is created;
- the cost estimate a definition must meet: ``syntax`` parses a rule, ``check`` types it as
  cel-go does from ``decl``'s declaration types, ``estimate`` prices it, and ``budget`` holds
  each definition to the API server's limits.

The package itself exports nothing: each caller names the module it uses.
"""
