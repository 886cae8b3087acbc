"""The worst-case cost of one CEL expression, estimated as the Kubernetes API server does.

The API server runs cel-go's static estimator (``checker/cost.go``) over each checked rule, with
the Kubernetes library's function costs (apiserver ``pkg/cel/library/cost.go``) and sizes read
from the schema (apiextensions ``schema/cel/compilation.go``: a value's size is the
``max_elements`` of its declaration type, ``modelplane.kube.cel.decl``). This module does the same
walk over a rule type-checked by ``modelplane.kube.cel.check``:

- a variable or field read costs 1, plus 1 when selecting from an object or a map; a literal 0;
  ``has()`` 0 beyond its operand (Kubernetes sets cel-go's PresenceTestHasCost(false));
- a call costs its arguments plus the function: 1 for most, a string traversal (0.1 per
  character) for ``startsWith``/``endsWith`` (of the argument), ``==`` and ordering (of the
  shorter side), ``+`` on strings, the Kubernetes string and quantity libraries; the product of
  string and argument traversals for ``contains``; ``(size + 1) * 0.1 * len(regex) * 0.25`` for
  ``matches``, ``find``, ``findAll``;
- a list literal 10, a map literal 30; a comprehension (every macro) its range, its
  accumulator's start and result, plus the range's size times (loop condition + step); so
  nested macros multiply;
- ``&&``/``||`` cost both sides (at most), ``?:`` its condition and the dearer branch.

A field's size is read by the path that reaches it from ``self`` (``self.spec.items`` -> the
list's ``max_elements``), as cel-go tracks it; cel-go keeps those paths in Go slices that later
appends may overwrite in place, and the API server's estimates carry the effect, so the paths
here are kept the same way (``_Path``).

Every figure saturates at 2**64 - 1 like cel-go's unsigned arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from modelplane.kube.cel.check import CIDR, IP, QUANTITY, SEMVER, URL, Checked, T
from modelplane.kube.cel.decl import Decl
from modelplane.kube.cel.syntax import (
    Call,
    Comprehension,
    CreateList,
    CreateMap,
    CreateStruct,
    Expr,
    Ident,
    Literal,
    Select,
)

MAX_UINT64 = 2**64 - 1
STRING_TRAVERSAL_COST_FACTOR = 0.1
REGEX_STRING_LENGTH_COST_FACTOR = 0.25
LIST_CREATE_BASE_COST = 10
MAP_CREATE_BASE_COST = 30
STRUCT_CREATE_BASE_COST = 40
SELECT_AND_IDENT_COST = 1

Range = tuple[int, int]  # (min, max): a SizeEstimate or a CostEstimate
_CallCost = tuple[Range, Range | None]  # a call's cost, and its result's size if known
UNKNOWN: Range = (0, MAX_UINT64)
_ACCUMULATORS = ("__result__", "@result")


def _add(a: Range, b: Range) -> Range:
    return min(a[0] + b[0], MAX_UINT64), min(a[1] + b[1], MAX_UINT64)


def _mul(a: Range, b: Range) -> Range:
    return min(a[0] * b[0], MAX_UINT64), min(a[1] * b[1], MAX_UINT64)


def _factor_one(x: int, factor: float) -> int:
    xf = float(x)
    if xf > 0 and factor > 0 and xf > float(MAX_UINT64) / factor:
        return MAX_UINT64
    ceil = math.ceil(xf * factor)
    return MAX_UINT64 if ceil >= 2**64 else int(ceil)


def _factor(a: Range, factor: float) -> Range:
    """cel-go's MultiplyByCostFactor: each bound times ``factor``, rounded up."""
    return _factor_one(a[0], factor), _factor_one(a[1], factor)


def _union(a: Range, b: Range) -> Range:
    return min(a[0], b[0]), max(a[1], b[1])


def _fixed(n: int) -> Range:
    return n, n


class _Path:
    """A Go ``[]string``: appending within capacity writes into the shared backing array."""

    __slots__ = ("arr", "cap", "n")

    def __init__(self, arr: list[str], n: int, cap: int) -> None:
        self.arr, self.n, self.cap = arr, n, cap

    def items(self) -> list[str]:
        return self.arr[: self.n]


def _append(path: _Path | None, item: str) -> _Path:
    if path is None:
        return _Path([item], 1, 1)
    if path.n < path.cap:
        if len(path.arr) > path.n:
            path.arr[path.n] = item
        else:
            path.arr.append(item)
        return _Path(path.arr, path.n + 1, path.cap)
    # Go doubles a small slice's capacity (16-byte strings fill malloc size classes exactly).
    return _Path([*path.arr[: path.n], item], path.n + 1, max(2 * path.cap, path.n + 1))


@dataclass
class _Entry:
    """Sizes of a container's keys (or indices) and values, when CEL can compute them."""

    container: str  # list or map
    key: Range
    val: Range


def _entry_union(a: _Entry | None, b: _Entry | None) -> _Entry | None:
    if a is None or b is None:
        return None
    return _Entry(a.container, _union(a.key, b.key), _union(a.val, b.val))


@dataclass
class _Local:
    path: _Path | None
    size: Range | None
    entry: _Entry | None


@dataclass
class _Node:
    """cel-go's AstNode: what a function estimator sees of an argument."""

    path: list[str] | None
    type: T | None
    expr: Expr | None
    size: Range | None


def estimate_detail(expr: Expr, checked: Checked, root: Decl) -> tuple[int, list[str]]:
    """The worst-case cost (cel-go's ``CostEstimate.Max``) of ``expr`` checked against ``self``
    declared by ``root``, and the values the estimate sized from the 3 MiB request limit because
    the schema bounds them not (``self.tolerations``, ``self.labels[*]``): where to add a
    bound."""
    coster = _Coster(checked, root)
    return coster.cost(expr)[1], list(dict.fromkeys(coster.unbounded))


class _CallSite(NamedTuple):
    """One call as a function's cost estimate sees it: the expression, the overload chosen, the
    receiver and arguments, their costs and the sum of those."""

    e: Call
    overload: str
    target: _Node | None
    args: list[_Node]
    arg_costs: list[Range]
    arg_sum: Range


class _Coster:
    def __init__(self, checked: Checked, root: Decl) -> None:
        self.checked = checked
        self.root = root
        self.paths: dict[int, _Path] = {}
        self.locals: dict[str, list[_Local]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, _Entry] = {}
        self.unbounded: list[str] = []

    # --- sizes ---------------------------------------------------------------------------------

    def estimate_size(self, path: list[str] | None) -> Range | None:
        """apiextensions' sizeEstimator: walk the declaration types from ``self``."""
        if not path:
            return None
        node = self.root
        for name in path[1:]:
            nxt: Decl | None
            if name in ("@items", "@values"):
                nxt = node.elem
            elif name == "@keys":
                nxt = node.key
            else:
                nxt = node.fields.get(name)
            if nxt is None:
                return None
            node = nxt
        if not node.bounded:
            self.unbounded.append(_readable(path))
        return 0, node.max_elements

    def type(self, e: Expr) -> T | None:
        return self.checked.types.get(e.id)

    def path(self, e: Expr) -> _Path | None:
        if isinstance(e, Ident):
            local = self.peek(e.name)
            if local is not None:
                return local.path
        return self.paths.get(e.id)

    def peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def push(self, name: str, local: _Local) -> None:
        self.locals.setdefault(name, []).append(local)

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def compute_size(self, e: Expr) -> Range | None:
        if e.id in self.sizes:
            return self.sizes[e.id]
        literal = _literal_size(e)
        if literal is not None:
            return literal
        path = self.path(e)
        size = self.estimate_size(path.items() if path is not None else None)
        if size is not None:
            self.sizes[e.id] = size
            return size
        t = self.type(e)
        if t is not None and _is_scalar(t):
            return 1, 1
        if isinstance(e, Ident):
            local = self.peek(e.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def size_or_unknown(self, e: Expr) -> Range:
        size = self.compute_size(e)
        return UNKNOWN if size is None else size

    def entry(self, e: Expr) -> _Entry | None:
        if e.id in self.entries:
            return self.entries[e.id]
        if isinstance(e, Ident):
            local = self.peek(e.name)
            if local is not None and local.entry is not None:
                return local.entry
        return None

    def set_size(self, e: Expr, size: Range | None) -> None:
        if size is not None:
            self.sizes[e.id] = size

    def set_entry(self, e: Expr, entry: _Entry | None) -> None:
        if entry is not None:
            self.entries[e.id] = entry

    def node(self, e: Expr) -> _Node:
        path = self.path(e)
        items = path.items() if path is not None else None
        if items and items[0] in _ACCUMULATORS:
            items = None
        return _Node(items, self.type(e), e, self.compute_size(e))

    # --- costs ---------------------------------------------------------------------------------

    def cost(self, e: Expr) -> Range:
        if isinstance(e, Literal):
            return 0, 0
        if isinstance(e, Ident):
            local = self.peek(e.name)
            path = local.path if local is not None else _Path([e.name], 1, 1)
            if path is None:
                self.paths.pop(e.id, None)
            else:
                self.paths[e.id] = path
            return _fixed(SELECT_AND_IDENT_COST)
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, CreateList):
            return self.create_list(e)
        if isinstance(e, CreateMap):
            return self.create_map(e)
        if isinstance(e, CreateStruct):
            total: Range = 0, 0
            for _, value, _ in e.fields:
                total = _add(total, self.cost(value))
            return _add(total, _fixed(STRUCT_CREATE_BASE_COST))
        if isinstance(e, Comprehension):
            if _is_bind(e):
                return self.bind(e)
            return self.comprehension(e)
        return 0, 0

    def select(self, e: Select) -> Range:
        if e.test_only:
            # Kubernetes: cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)).
            return self.cost(e.operand)
        total = self.cost(e.operand)
        operand = self.type(e.operand)
        if operand is not None and operand.kind in ("map", "struct", "param"):
            total = _add(total, _fixed(SELECT_AND_IDENT_COST))
        self.paths[e.id] = _append(self.path(e.operand), e.field)
        return total

    def call(self, e: Call) -> Range:
        if e.function == "dyn" and e.target is None and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self.set_size(e, self.compute_size(e.args[0]))
            self.set_entry(e, self.entry(e.args[0]))
            return _add(_fixed(1), arg_cost)
        arg_costs = []
        arg_nodes = []
        for arg in e.args:
            arg_costs.append(self.cost(arg))
            arg_nodes.append(self.node(arg))
        overloads = self.checked.overloads.get(e.id, [])
        if not overloads:
            return 0, 0
        total: Range = 0, 0
        target: _Node | None = None
        if e.target is not None:
            total = self.cost(e.target)
            target = self.node(e.target)
        fn_cost: Range = MAX_UINT64, 0
        result: Range | None = None
        for overload in overloads:
            cost, size = self.function_cost(e, overload, target, arg_nodes, arg_costs)
            fn_cost = _union(fn_cost, cost)
            if size is not None:
                result = size if result is None else _union(result, size)
            if overload in ("index_list", "index_map") and e.args:
                result = self.index(e, overload)
            if result is None:
                result = self.compute_size(e)
        self.set_size(e, result)
        return _add(total, fn_cost)

    def index(self, e: Call, overload: str) -> Range | None:
        """An index into a list or map: its path one level down, and the size of the entries
        the container was built with, if known."""
        sub = self.entry(e.args[0])
        item = "@items" if overload == "index_list" else "@values"
        self.paths[e.id] = _append(self.path(e.args[0]), item)
        return None if sub is None else sub.val

    def create_list(self, e: CreateList) -> Range:
        total: Range = 0, 0
        item: Range = (MAX_UINT64, 0) if e.elements else (0, 0)
        for x in e.elements:
            total = _add(total, self.cost(x))
            item = _union(item, self.size_or_unknown(x))
        self.set_entry(e, _Entry("list", (1, 1), item))
        return _add(total, _fixed(LIST_CREATE_BASE_COST))

    def create_map(self, e: CreateMap) -> Range:
        total: Range = 0, 0
        key: Range = (MAX_UINT64, 0) if e.entries else (0, 0)
        val: Range = (MAX_UINT64, 0) if e.entries else (0, 0)
        for k, v, _ in e.entries:
            total = _add(total, self.cost(k))
            total = _add(total, self.cost(v))
            key = _union(key, self.size_or_unknown(k))
            val = _union(val, self.size_or_unknown(v))
        self.set_entry(e, _Entry("map", key, val))
        return _add(total, _fixed(MAP_CREATE_BASE_COST))

    def push_local(self, name: str, e: Expr) -> None:
        self.push(name, _Local(self.path(e), self.compute_size(e), self.entry(e)))

    def container(self, e: Expr, entry: _Entry | None) -> str:
        if entry is not None:
            return entry.container
        t = self.type(e)
        return t.kind if t is not None else ""

    def push_iter(self, name: str, e: Expr, part: str) -> None:
        """Bind an iteration variable: ``part`` is single, key or value (cel-go's
        pushIterSingle, pushIterKey, pushIterValue)."""
        entry = self.entry(e)
        is_list = self.container(e, entry) == "list"
        if part == "key":
            size = entry.key if entry else None
            sub = "@indices" if is_list else "@keys"
        elif part == "value":
            size = entry.val if entry else None
            sub = "@items" if is_list else "@values"
        else:
            size = (entry.val if is_list else entry.key) if entry else None
            sub = "@items" if is_list else "@keys"
        self.push(name, _Local(_append(self.path(e), sub), size, None))

    def comprehension(self, e: Comprehension) -> Range:
        total = _add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push_local(e.accu_var, e.accu_init)
        if e.iter_var2:
            self.push_iter(e.iter_var, e.iter_range, "key")
            self.push_iter(e.iter_var2, e.iter_range, "value")
        else:
            self.push_iter(e.iter_var, e.iter_range, "single")
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2:
            self.pop(e.iter_var2)
        total = _add(total, self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = _add(total, _mul(count, _add(step, loop)))
        if isinstance(e.accu_init, Literal):
            self.set_size(e, self.compute_size(e.accu_init))
        elif isinstance(e.accu_init, (CreateList, CreateMap)):
            self.set_size(e, count)
            self.set_entry(e, self.entry(e.loop_step))
        return total

    def bind(self, e: Comprehension) -> Range:
        # Binds are lazy: cel-go keeps the cost of the empty list the macro iterates.
        total = _add(self.cost(e.iter_range), self.cost(e.accu_init))
        self.push_local(e.accu_var, e.accu_init)
        total = _add(total, self.cost(e.result))
        self.pop(e.accu_var)
        self.set_size(e, self.compute_size(e.result))
        self.set_entry(e, self.entry(e.result))
        return total

    # --- function costs ------------------------------------------------------------------------

    def node_size(self, node: _Node) -> Range:
        """The Kubernetes library's sizeEstimate: computed, else from the schema, else unknown."""
        if node.size is not None:
            return node.size
        size = self.estimate_size(node.path)
        return UNKNOWN if size is None else size

    def function_cost(
        self,
        e: Call,
        overload: str,
        target: _Node | None,
        args: list[_Node],
        arg_costs: list[Range],
    ) -> _CallCost:
        arg_sum: Range = 0, 0
        for c in arg_costs:
            arg_sum = _add(arg_sum, c)
        # apiserver ``library.CostEstimator.EstimateCallCost`` (keyed by function name) first,
        # then cel-go's own function costs (checker ``functionCost``, keyed by overload).
        call = _CallSite(e, overload, target, args, arg_costs, arg_sum)
        library_cost = _LIBRARY_COSTS.get(e.function)
        library = library_cost(self, call) if library_cost else None
        if library is not None:
            return _add(library[0], arg_sum), library[1]
        builtin_cost = _BUILTIN_COSTS.get(overload)
        builtin = builtin_cost(self, call) if builtin_cost else None
        if builtin is not None:
            return builtin
        return _add(_fixed(1), arg_sum), None

    def element_node(self, target: _Node) -> _Node | None:
        if target.type is None or not target.type.params:
            return None
        path = [*target.path, "@items"] if target.path is not None else None
        return _Node(path, target.type.params[0], None, None)

    def list_function_cost(self, call: _CallSite) -> _CallCost | None:
        """isSorted, sum, max, min, indexOf, lastIndexOf, includes: one visit per element."""
        target = call.target
        if target is None:
            return None
        element = self.element_node(target)
        el_cost: Range = 1, 1
        if element is not None:
            assert element.type is not None
            if element.type.kind in ("string", "bytes"):
                size = self.node_size(element)
                el_cost = _add(el_cost, _factor(size, STRING_TRAVERSAL_COST_FACTOR))
            return _mul(self.node_size(target), el_cost), None
        if call.e.function == "includes":
            return _mul(self.node_size(target), el_cost), None
        # No element type: the target is a string, which indexOf and lastIndexOf also search.
        return _factor(self.node_size(target), STRING_TRAVERSAL_COST_FACTOR), None

    def url_cost(self, call: _CallSite) -> _CallCost | None:
        if len(call.args) != 1:
            return None
        sz = self.node_size(call.args[0])
        return _factor(sz, STRING_TRAVERSAL_COST_FACTOR), sz

    def string_function_cost(self, call: _CallSite) -> _CallCost | None:
        """lowerAscii, upperAscii, substring, trim: one traversal of the target string."""
        if call.target is None:
            return None
        sz = self.node_size(call.target)
        return _factor(sz, STRING_TRAVERSAL_COST_FACTOR), sz

    def replace_function_cost(self, call: _CallSite) -> _CallCost | None:
        target, args = call.target, call.args
        if target is None or len(args) < 2:
            return None
        return self.replace_cost(
            self.node_size(target), self.node_size(args[0]), self.node_size(args[1])
        )

    def split_cost(self, call: _CallSite) -> _CallCost | None:
        target, args = call.target, call.args
        if target is None:
            return None
        sz = self.node_size(target)
        most = sz[1]
        if len(args) > 1:
            limit = args[1].expr
            if isinstance(limit, Literal) and limit.kind == "int":
                most = limit.value & MAX_UINT64
        return _factor(sz, 2 * STRING_TRAVERSAL_COST_FACTOR), (0, most)

    def join_cost(self, call: _CallSite) -> _CallCost | None:
        target, args = call.target, call.args
        if target is None:
            return None
        joined: Range = 0, 0
        count = self.node_size(target)
        element = self.element_node(target)
        if element is not None:
            joined = _mul(count, self.node_size(element))
        if args:
            separators = (max(count[0] - 1, 0), max(count[1] - 1, 0))
            joined = _add(joined, _mul(self.node_size(args[0]), separators))
        return _factor(joined, STRING_TRAVERSAL_COST_FACTOR), joined

    def find_cost(self, call: _CallSite) -> _CallCost | None:
        """find, findAll: a regex over the target, as ``matches``."""
        target, args = call.target, call.args
        if target is None or not args:
            return None
        sz = self.node_size(target)
        text = _factor(_add(sz, (1, 1)), STRING_TRAVERSAL_COST_FACTOR)
        regex = _factor(self.node_size(args[0]), REGEX_STRING_LENGTH_COST_FACTOR)
        return _mul(text, regex), (0, sz[1])

    def parse_cost(self, call: _CallSite) -> _CallCost | None:
        """cidr, isIP, isCIDR, quantity, isQuantity, semver, isSemver: one traversal of the
        string parsed."""
        if not call.args:
            return None
        return _factor(self.node_size(call.args[0]), STRING_TRAVERSAL_COST_FACTOR), None

    def ip_cost(self, call: _CallSite) -> _CallCost | None:
        if call.overload == "cidr_ip":
            return _fixed(1), None
        return self.parse_cost(call)

    def ip_is_canonical_cost(self, call: _CallSite) -> _CallCost | None:
        if not call.args:
            return None
        return _factor(self.node_size(call.args[0]), 2 * STRING_TRAVERSAL_COST_FACTOR), None

    def constant_cost(self, call: _CallSite) -> _CallCost | None:
        return _fixed(1), None

    def contains_address_cost(self, call: _CallSite) -> _CallCost | None:
        """containsIP, containsCIDR."""
        if not call.args:
            return None
        ip: Range = 4, 16
        cost = _factor(_add(ip, ip), STRING_TRAVERSAL_COST_FACTOR)
        if call.e.function == "containsCIDR":
            cost = _add(cost, _factor(ip, STRING_TRAVERSAL_COST_FACTOR))
            cost = _add(cost, _fixed(1))
        if call.overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
            cost = _add(cost, _factor(self.node_size(call.args[0]), STRING_TRAVERSAL_COST_FACTOR))
        return cost, None

    def library_equals_cost(self, call: _CallSite) -> _CallCost | None:
        """``==`` between two values of one of the library's types."""
        args = call.args
        if len(args) != 2 or args[0].type is None or args[0].type != args[1].type:
            return None
        t = args[0].type
        if t in (IP, CIDR, QUANTITY, SEMVER):
            return _fixed(1), None
        if t == URL:
            # The API server unions the right-hand size with itself (it reads rhs twice).
            bound: Range = 1, 1
            if args[1].size is not None:
                bound = args[1].size
            return _factor((1, bound[1]), STRING_TRAVERSAL_COST_FACTOR), None
        return None

    @staticmethod
    def replace_cost(text: Range, old: Range, new: Range) -> _CallCost:
        count_min = count_max = 0
        kept_min = kept_max = 0
        if old[0] == 0:
            count_max = text[1] + 1 if text[1] < MAX_UINT64 else text[1]
            kept_max = text[1]
        elif new[1] <= old[0]:
            kept_max = text[1]
        else:
            count_max = math.ceil(float(text[1]) / float(old[0]))
        if old[1] == 0:
            count_min = text[0] + 1 if text[0] < MAX_UINT64 else text[0]
            kept_min = text[0]
        elif old[1] <= new[0]:
            kept_min = text[0]
        else:
            count_min = math.ceil(float(text[0]) / float(old[1]))
        count = (min(count_min, MAX_UINT64), min(count_max, MAX_UINT64))
        result = _add(_mul(count, new), (kept_min, kept_max))
        return _factor(text, 2 * STRING_TRAVERSAL_COST_FACTOR), result

    def format_cost(self, call: _CallSite) -> _CallCost | None:
        if call.target is None:
            return None
        return _traversal(_size(call.target), call.arg_sum), None

    def string_to_bytes_cost(self, call: _CallSite) -> _CallCost | None:
        if len(call.args) != 1:
            return None
        sz = _size(call.args[0])
        return _traversal(sz, call.arg_sum), (sz[0], min(sz[1] * 4, MAX_UINT64))

    def bytes_to_string_cost(self, call: _CallSite) -> _CallCost | None:
        if len(call.args) != 1:
            return None
        sz = _size(call.args[0])
        return _traversal(sz, call.arg_sum), (sz[0] // 4, sz[1])

    def quote_cost(self, call: _CallSite) -> _CallCost | None:
        if len(call.args) != 1:
            return None
        sz = _size(call.args[0])
        quoted = (min(sz[0] + 2, MAX_UINT64), min(sz[1] * 2 + 2, MAX_UINT64))
        return _traversal(sz, call.arg_sum), quoted

    def affix_cost(self, call: _CallSite) -> _CallCost | None:
        """startsWith, endsWith: a traversal of the argument."""
        if len(call.args) != 1:
            return None
        return _traversal(_size(call.args[0]), call.arg_sum), None

    def in_list_cost(self, call: _CallSite) -> _CallCost | None:
        if len(call.args) != 2:
            return None
        return _add(_factor(_size(call.args[1]), 1), call.arg_sum), None

    def matches_cost(self, call: _CallSite) -> _CallCost | None:
        target, args = call.target, call.args
        if target is None or len(args) != 1:
            return None
        text = _factor(_add(_size(target), (1, 1)), STRING_TRAVERSAL_COST_FACTOR)
        regex = _factor(_size(args[0]), REGEX_STRING_LENGTH_COST_FACTOR)
        return _add(_mul(text, regex), call.arg_sum), None

    def contains_cost(self, call: _CallSite) -> _CallCost | None:
        target, args = call.target, call.args
        if target is None or len(args) != 1:
            return None
        text = _factor(_size(target), STRING_TRAVERSAL_COST_FACTOR)
        sub = _factor(_size(args[0]), STRING_TRAVERSAL_COST_FACTOR)
        return _add(_mul(text, sub), call.arg_sum), None

    def logical_cost(self, call: _CallSite) -> _CallCost | None:
        """``&&``, ``||``: at least the left side, at most both."""
        lhs, rhs = call.arg_costs
        return (lhs[0], _add(lhs, rhs)[1]), None

    def conditional_cost(self, call: _CallSite) -> _CallCost | None:
        """``?:``: the condition and the dearer branch."""
        args, arg_costs = call.args, call.arg_costs
        result = _union(_size(args[1]), _size(args[2]))
        assert args[1].expr is not None and args[2].expr is not None
        self.set_entry(call.e, _entry_union(self.entry(args[1].expr), self.entry(args[2].expr)))
        return _add(arg_costs[0], _union(arg_costs[1], arg_costs[2])), result

    def concatenation_cost(self, call: _CallSite) -> _CallCost | None:
        """``+`` on strings, bytes and lists."""
        args = call.args
        if len(args) != 2:
            return None
        result = _add(_size(args[0]), _size(args[1]))
        assert args[0].expr is not None and args[1].expr is not None
        self.set_entry(call.e, _entry_union(self.entry(args[0].expr), self.entry(args[1].expr)))
        if call.overload == "add_list":
            return _add(_fixed(1), call.arg_sum), result
        return _traversal(result, call.arg_sum), result

    def comparison_cost(self, call: _CallSite) -> _CallCost | None:
        """Equality and ordering: a traversal of the shorter side."""
        smallest = min(_size(call.args[0])[1], _size(call.args[1])[1])
        low = 1 if smallest > 0 else 0
        return _traversal((low, smallest), call.arg_sum), None


_Cost = Callable[[_Coster, _CallSite], _CallCost | None]
_LIBRARY_COSTS: dict[str, _Cost] = {
    **dict.fromkeys(
        ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf", "includes"),
        _Coster.list_function_cost,
    ),
    "url": _Coster.url_cost,
    **dict.fromkeys(
        ("lowerAscii", "upperAscii", "substring", "trim"), _Coster.string_function_cost
    ),
    "replace": _Coster.replace_function_cost,
    "split": _Coster.split_cost,
    "join": _Coster.join_cost,
    "find": _Coster.find_cost,
    "findAll": _Coster.find_cost,
    **dict.fromkeys(
        ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver"),
        _Coster.parse_cost,
    ),
    "ip": _Coster.ip_cost,
    "ip.isCanonical": _Coster.ip_is_canonical_cost,
    **dict.fromkeys(
        (
            "masked",
            "prefixLength",
            "family",
            "isUnspecified",
            "isLoopback",
            "isLinkLocalMulticast",
            "isLinkLocalUnicast",
            "isGlobalUnicast",
            "sign",
            "asInteger",
            "isInteger",
            "asApproximateFloat",
            "isGreaterThan",
            "isLessThan",
            "compareTo",
            "add",
            "sub",
            "major",
            "minor",
            "patch",
            "getScheme",
            "getHostname",
            "getHost",
            "getPort",
            "getEscapedPath",
            "getQuery",
        ),
        _Coster.constant_cost,
    ),
    "containsIP": _Coster.contains_address_cost,
    "containsCIDR": _Coster.contains_address_cost,
    "_==_": _Coster.library_equals_cost,
}

_BUILTIN_COSTS: dict[str, _Cost] = {
    "string_format": _Coster.format_cost,
    "string_to_bytes": _Coster.string_to_bytes_cost,
    "bytes_to_string": _Coster.bytes_to_string_cost,
    "strings_quote": _Coster.quote_cost,
    "starts_with_string": _Coster.affix_cost,
    "ends_with_string": _Coster.affix_cost,
    "in_list": _Coster.in_list_cost,
    "matches_string": _Coster.matches_cost,
    "contains_string": _Coster.contains_cost,
    "logical_or": _Coster.logical_cost,
    "logical_and": _Coster.logical_cost,
    "conditional": _Coster.conditional_cost,
    "add_string": _Coster.concatenation_cost,
    "add_bytes": _Coster.concatenation_cost,
    "add_list": _Coster.concatenation_cost,
    **dict.fromkeys(
        (
            "less_string",
            "greater_string",
            "less_equals_string",
            "greater_equals_string",
            "less_bytes",
            "greater_bytes",
            "less_equals_bytes",
            "greater_equals_bytes",
            "equals",
            "not_equals",
        ),
        _Coster.comparison_cost,
    ),
}


def _traversal(size: Range, arg_sum: Range) -> Range:
    """A traversal of a string of ``size``, plus the cost of the call's arguments."""
    return _add(_factor(size, STRING_TRAVERSAL_COST_FACTOR), arg_sum)


def _size(node: _Node) -> Range:
    """An argument's size as the walk computed it, else unknown."""
    return UNKNOWN if node.size is None else node.size


def _readable(path: list[str]) -> str:
    out = path[0]
    for name in path[1:]:
        out += {"@items": "[*]", "@values": "[*]", "@keys": ".<keys>"}.get(name, f".{name}")
    return out


def _literal_size(e: Expr) -> Range | None:
    if isinstance(e, Literal):
        if e.kind in ("string", "bytes"):
            return _fixed(len(e.value))
        return 1, 1
    if isinstance(e, CreateList):
        return _fixed(len(e.elements))
    if isinstance(e, CreateMap):
        return _fixed(len(e.entries))
    return None


def _is_scalar(t: T) -> bool:
    if t.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    return t.kind == "optional" and _is_scalar(t.params[0])


def _is_bind(e: Comprehension) -> bool:
    return (
        isinstance(e.iter_range, CreateList)
        and not e.iter_range.elements
        and isinstance(e.loop_condition, Literal)
        and e.loop_condition.value is False
        and e.accu_var != "__result__"
    )
