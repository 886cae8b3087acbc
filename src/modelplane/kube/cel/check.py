"""Type-check a parsed CEL rule as cel-go does, for the cost estimator.

The API server's cost estimate reads the checked syntax tree: each expression's type (is a
selection made on an object or map, is a value a scalar, what does a list hold) and each call's
candidate overloads (``add_string`` and ``add_list`` cost differently). cel-expr-python's checker
is cel-cpp's and keeps neither where Python can read them, and
``modelplane.kube.cel.schematypes`` leaves some types ``dyn`` where cel-go knows them, so the
types are inferred here again, from the schema's declaration types (``modelplane.kube.cel.decl``)
and the overloads cel-go v0.26 and the Kubernetes libraries declare (the library set of
Kubernetes 1.34 to 1.36).

Overload resolution follows cel-go's: every overload whose parameters accept the arguments (a
``dyn`` argument is accepted anywhere) is a candidate; type parameters unify; the result type is
the candidates' common result, else ``dyn``. A call of a function this module does not declare is
a ``CheckError``: the estimator refuses to guess the cost of what it does not know.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cache

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


class CheckError(ValueError):
    """A rule the estimator cannot type: an unknown function, field or construct."""


@dataclass(frozen=True)
class T:
    """A CEL type. ``kind``: bool int uint double string bytes null duration timestamp dyn list
    map struct opaque optional type param. Structs from a schema carry their declaration."""

    kind: str
    params: tuple[T, ...] = ()
    name: str = ""
    decl: Decl | None = field(default=None, compare=False, hash=False)

    def __str__(self) -> str:
        if self.kind in ("struct", "opaque", "param"):
            return self.name
        if self.params:
            return f"{self.kind}({', '.join(map(str, self.params))})"
        return self.kind


BOOL, INT, UINT, DOUBLE = T("bool"), T("int"), T("uint"), T("double")
STRING, BYTES, NULL, DYN = T("string"), T("bytes"), T("null"), T("dyn")
DURATION, TIMESTAMP = T("duration"), T("timestamp")
QUANTITY = T("struct", name="kubernetes.Quantity")
SEMVER = T("struct", name="kubernetes.Semver")
URL = T("struct", name="kubernetes.URL")
IP = T("opaque", name="net.IP")
CIDR = T("opaque", name="net.CIDR")

_SCALARS = {"bool": BOOL, "int": INT, "double": DOUBLE, "string": STRING, "bytes": BYTES}
_SCALARS |= {"duration": DURATION, "timestamp": TIMESTAMP, "dyn": DYN}


def list_of(elem: T) -> T:
    return T("list", (elem,))


def map_of(key: T, value: T) -> T:
    return T("map", (key, value))


def optional_of(value: T) -> T:
    return T("optional", (value,))


def type_of(value: T) -> T:
    return T("type", (value,))


def decl_type(decl: Decl) -> T:
    """The CEL type of values declared by ``decl``."""
    if decl.kind == "object":
        return T("struct", name=f"object@{id(decl)}", decl=decl)
    if decl.kind == "list":
        assert decl.elem is not None
        return list_of(decl_type(decl.elem))
    if decl.kind == "map":
        assert decl.elem is not None
        return map_of(STRING, decl_type(decl.elem))
    return _SCALARS[decl.kind]


# --- declarations -----------------------------------------------------------------------------

# One line per overload: function, overload id, g(lobal) or m(ember), params -> result. A
# member's first parameter is its receiver. A and B are type parameters.
_DECLARATIONS = """
_?_:_ conditional g bool,A,A->A
_&&_ logical_and g bool,bool->bool
_||_ logical_or g bool,bool->bool
!_ logical_not g bool->bool
@not_strictly_false not_strictly_false g bool->bool
__not_strictly_false__ __not_strictly_false__ g bool->bool
_==_ equals g A,A->bool
_!=_ not_equals g A,A->bool
_+_ add_bytes g bytes,bytes->bytes
_+_ add_double g double,double->double
_+_ add_duration_duration g duration,duration->duration
_+_ add_duration_timestamp g duration,timestamp->timestamp
_+_ add_timestamp_duration g timestamp,duration->timestamp
_+_ add_int64 g int,int->int
_+_ add_list g list(A),list(A)->list(A)
_+_ add_string g string,string->string
_+_ add_uint64 g uint,uint->uint
_/_ divide_double g double,double->double
_/_ divide_int64 g int,int->int
_/_ divide_uint64 g uint,uint->uint
_%_ modulo_int64 g int,int->int
_%_ modulo_uint64 g uint,uint->uint
_*_ multiply_double g double,double->double
_*_ multiply_int64 g int,int->int
_*_ multiply_uint64 g uint,uint->uint
-_ negate_double g double->double
-_ negate_int64 g int->int
_-_ subtract_double g double,double->double
_-_ subtract_duration_duration g duration,duration->duration
_-_ subtract_int64 g int,int->int
_-_ subtract_timestamp_duration g timestamp,duration->timestamp
_-_ subtract_timestamp_timestamp g timestamp,timestamp->duration
_-_ subtract_uint64 g uint,uint->uint
_[_] index_list g list(A),int->A
_[_] index_map g map(A,B),A->B
@in in_list g A,list(A)->bool
@in in_map g A,map(A,B)->bool
size size_bytes g bytes->int
size bytes_size m bytes->int
size size_list g list(A)->int
size list_size m list(A)->int
size size_map g map(A,B)->int
size map_size m map(A,B)->int
size size_string g string->int
size string_size m string->int
type type g A->type(A)
bool bool_to_bool g bool->bool
bool string_to_bool g string->bool
bytes bytes_to_bytes g bytes->bytes
bytes string_to_bytes g string->bytes
double double_to_double g double->double
double int64_to_double g int->double
double string_to_double g string->double
double uint64_to_double g uint->double
duration duration_to_duration g duration->duration
duration int64_to_duration g int->duration
duration string_to_duration g string->duration
dyn to_dyn g A->dyn
int int64_to_int64 g int->int
int double_to_int64 g double->int
int duration_to_int64 g duration->int
int string_to_int64 g string->int
int timestamp_to_int64 g timestamp->int
int uint64_to_int64 g uint->int
string string_to_string g string->string
string bool_to_string g bool->string
string bytes_to_string g bytes->string
string double_to_string g double->string
string duration_to_string g duration->string
string int64_to_string g int->string
string timestamp_to_string g timestamp->string
string uint64_to_string g uint->string
timestamp timestamp_to_timestamp g timestamp->timestamp
timestamp int64_to_timestamp g int->timestamp
timestamp string_to_timestamp g string->timestamp
uint uint64_to_uint64 g uint->uint
uint double_to_uint64 g double->uint
uint int64_to_uint64 g int->uint
uint string_to_uint64 g string->uint
contains contains_string m string,string->bool
endsWith ends_with_string m string,string->bool
startsWith starts_with_string m string,string->bool
matches matches g string,string->bool
matches matches_string m string,string->bool
getFullYear timestamp_to_year m timestamp->int
getFullYear timestamp_to_year_with_tz m timestamp,string->int
getMonth timestamp_to_month m timestamp->int
getMonth timestamp_to_month_with_tz m timestamp,string->int
getDayOfYear timestamp_to_day_of_year m timestamp->int
getDayOfYear timestamp_to_day_of_year_with_tz m timestamp,string->int
getDayOfMonth timestamp_to_day_of_month m timestamp->int
getDayOfMonth timestamp_to_day_of_month_with_tz m timestamp,string->int
getDate timestamp_to_day_of_month_1_based m timestamp->int
getDate timestamp_to_day_of_month_1_based_with_tz m timestamp,string->int
getDayOfWeek timestamp_to_day_of_week m timestamp->int
getDayOfWeek timestamp_to_day_of_week_with_tz m timestamp,string->int
getHours timestamp_to_hours m timestamp->int
getHours timestamp_to_hours_with_tz m timestamp,string->int
getHours duration_to_hours m duration->int
getMinutes timestamp_to_minutes m timestamp->int
getMinutes timestamp_to_minutes_with_tz m timestamp,string->int
getMinutes duration_to_minutes m duration->int
getSeconds timestamp_to_seconds m timestamp->int
getSeconds timestamp_to_seconds_tz m timestamp,string->int
getSeconds duration_to_seconds m duration->int
getMilliseconds timestamp_to_milliseconds m timestamp->int
getMilliseconds timestamp_to_milliseconds_with_tz m timestamp,string->int
getMilliseconds duration_to_milliseconds m duration->int
optional.of optional_of g A->optional(A)
optional.ofNonZeroValue optional_ofNonZeroValue g A->optional(A)
optional.none optional_none g ->optional(A)
value optional_value m optional(A)->A
hasValue optional_hasValue m optional(A)->bool
or optional_or_optional m optional(A),optional(A)->optional(A)
orValue optional_orValue_value m optional(A),A->A
_[?_] list_optindex_optional_int g list(A),int->optional(A)
_[?_] optional_list_optindex_optional_int g optional(list(A)),int->optional(A)
_[?_] map_optindex_optional_value g map(A,B),A->optional(B)
_[?_] optional_map_optindex_optional_value g optional(map(A,B)),A->optional(B)
_[_] optional_list_index_int g optional(list(A)),int->optional(A)
_[_] optional_map_index_value g optional(map(A,B)),A->optional(B)
charAt string_char_at_int m string,int->string
indexOf string_index_of_string m string,string->int
indexOf string_index_of_string_int m string,string,int->int
lastIndexOf string_last_index_of_string m string,string->int
lastIndexOf string_last_index_of_string_int m string,string,int->int
lowerAscii string_lower_ascii m string->string
replace string_replace_string_string m string,string,string->string
replace string_replace_string_string_int m string,string,string,int->string
split string_split_string m string,string->list(string)
split string_split_string_int m string,string,int->list(string)
substring string_substring_int m string,int->string
substring string_substring_int_int m string,int,int->string
trim string_trim m string->string
upperAscii string_upper_ascii m string->string
join list_join m list(string)->string
join list_join_string m list(string),string->string
format string_format m string,list(dyn)->string
strings.quote strings_quote g string->string
isSorted list_is_sorted m list(A)->bool
sum list_sum m list(A)->A
min list_min m list(A)->A
max list_max m list(A)->A
indexOf list_index_of m list(A),A->int
lastIndexOf list_last_index_of m list(A),A->int
find string_find m string,string->string
findAll string_find_all m string,string->list(string)
findAll string_find_all_n m string,string,int->list(string)
url string_to_url g string->url
isURL is_url_string g string->bool
getScheme url_get_scheme m url->string
getHost url_get_host m url->string
getHostname url_get_hostname m url->string
getPort url_get_port m url->string
getEscapedPath url_get_escaped_path m url->string
getQuery url_get_query m url->map(string,list(string))
quantity string_to_quantity g string->quantity
isQuantity is_quantity_string g string->bool
sign quantity_sign g quantity->int
isInteger quantity_is_integer m quantity->bool
asInteger quantity_get_integer m quantity->int
asApproximateFloat quantity_get_float m quantity->double
add quantity_add m quantity,quantity->quantity
add quantity_add_int m quantity,int->quantity
sub quantity_sub m quantity,quantity->quantity
sub quantity_sub_int m quantity,int->quantity
compareTo quantity_compare_to m quantity,quantity->int
isLessThan quantity_less m quantity,quantity->bool
isGreaterThan quantity_greater m quantity,quantity->bool
semver string_to_semver g string->semver
semver string_bool_to_semver g string,bool->semver
isSemver is_semver_string g string->bool
isSemver is_semver_string_bool g string,bool->bool
major semver_major m semver->int
minor semver_minor m semver->int
patch semver_patch m semver->int
compareTo semver_compare_to m semver,semver->int
isLessThan semver_less m semver,semver->bool
isGreaterThan semver_greater m semver,semver->bool
ip string_to_ip g string->ip
isIP is_ip g string->bool
ip.isCanonical ip_is_canonical g string->bool
family ip_family m ip->int
isUnspecified ip_is_unspecified m ip->bool
isLoopback ip_is_loopback m ip->bool
isLinkLocalMulticast ip_is_link_local_multicast m ip->bool
isLinkLocalUnicast ip_is_link_local_unicast m ip->bool
isGlobalUnicast ip_is_global_unicast m ip->bool
cidr string_to_cidr g string->cidr
isCIDR is_cidr g string->bool
containsIP cidr_contains_ip_ip m cidr,ip->bool
containsIP cidr_contains_ip_string m cidr,string->bool
containsCIDR cidr_contains_cidr m cidr,cidr->bool
containsCIDR cidr_contains_cidr_string m cidr,string->bool
ip cidr_ip m cidr->ip
masked cidr_masked m cidr->cidr
prefixLength cidr_prefix_length m cidr->int
"""


@dataclass(frozen=True)
class Overload:
    id: str
    member: bool
    params: tuple[T, ...]
    result: T


_NAMED = _SCALARS | {
    "uint": UINT,
    "null": NULL,
    "quantity": QUANTITY,
    "semver": SEMVER,
    "url": URL,
    "ip": IP,
    "cidr": CIDR,
}


def _parse_type(text: str) -> T:
    text = text.strip()
    if text in _NAMED:
        return _NAMED[text]
    if text in ("A", "B"):
        return T("param", name=text)
    head, paren, rest = text.partition("(")
    if not paren or not rest.endswith(")"):
        raise ValueError(f"bad type in a declaration: {text!r}")
    return T(head, tuple(_parse_type(p) for p in _split(rest[:-1])))


def _split(text: str) -> list[str]:
    """``text`` split at its top-level commas."""
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _orderings() -> list[str]:
    """The ordering operators' overloads (Kubernetes enables cross-type numeric comparisons)."""
    pairs = [("bool", "bool", "bool"), ("int64", "int", "int"), ("uint64", "uint", "uint")]
    pairs += [("double", "double", "double"), ("string", "string", "string")]
    pairs += [("bytes", "bytes", "bytes"), ("timestamp", "timestamp", "timestamp")]
    pairs += [("duration", "duration", "duration")]
    numbers = {"int64": "int", "uint64": "uint", "double": "double"}
    pairs += [
        (f"{a}_{b}", ta, tb) for a, ta in numbers.items() for b, tb in numbers.items() if a != b
    ]
    lines = []
    for op, name in (("_<_", "less"), ("_<=_", "less_equals"), ("_>_", "greater")):
        lines += [f"{op} {name}_{suffix} g {a},{b}->bool" for suffix, a, b in pairs]
    lines += [f"_>=_ greater_equals_{suffix} g {a},{b}->bool" for suffix, a, b in pairs]
    return lines


@cache
def functions() -> dict[str, list[Overload]]:
    """Every declared function by name (qualified names like ``optional.of`` included)."""
    table: dict[str, list[Overload]] = {}
    for line in [*_DECLARATIONS.strip().splitlines(), *_orderings()]:
        name, overload_id, scope, signature = line.split(" ", 3)
        params_text, result_text = signature.split("->")
        params = tuple(_parse_type(p) for p in _split(params_text))
        overload = Overload(overload_id, scope == "m", params, _parse_type(result_text))
        table.setdefault(name, []).append(overload)
    return table


_TYPE_NAMES = {
    "bool": BOOL,
    "int": INT,
    "uint": UINT,
    "double": DOUBLE,
    "string": STRING,
    "bytes": BYTES,
    "null_type": NULL,
    "dyn": DYN,
    "list": list_of(DYN),
    "map": map_of(DYN, DYN),
    "type": type_of(DYN),
    "google.protobuf.Duration": DURATION,
    "google.protobuf.Timestamp": TIMESTAMP,
}


# --- the checker ------------------------------------------------------------------------------


@dataclass
class Checked:
    """Types by expression id, and the candidate overload ids of each call."""

    types: dict[int, T]
    overloads: dict[int, list[str]]


def check(expr: Expr, variables: dict[str, T]) -> Checked:
    return _Checker(variables).run(expr)


_FRESH = itertools.count()


class _Checker:
    def __init__(self, variables: dict[str, T]) -> None:
        self.variables = variables
        self.scopes: list[tuple[str, T]] = []
        self.types: dict[int, T] = {}
        self.overloads: dict[int, list[str]] = {}
        self.mapping: dict[str, T] = {}

    def run(self, expr: Expr) -> Checked:
        self.check(expr)
        return Checked({i: self.substitute(t) for i, t in self.types.items()}, self.overloads)

    def fresh(self) -> T:
        return T("param", name=f"_{next(_FRESH)}")

    def substitute(self, t: T) -> T:
        if t.kind == "param":
            bound = self.mapping.get(t.name)
            return DYN if bound is None else self.substitute(bound)
        if t.params:
            return T(t.kind, tuple(self.substitute(p) for p in t.params), t.name, t.decl)
        return t

    def set(self, e: Expr, t: T) -> T:
        self.types[e.id] = t
        return t

    def lookup(self, name: str) -> T | None:
        for var, t in reversed(self.scopes):
            if var == name:
                return t
        return self.variables.get(name)

    def check(self, e: Expr) -> T:
        if isinstance(e, Literal):
            return self.set(e, _NAMED[e.kind])
        if isinstance(e, Ident):
            t = self.lookup(e.name)
            if t is None:
                named = _TYPE_NAMES.get(e.name)
                if named is None:
                    raise CheckError(f"undeclared reference to '{e.name}'")
                t = type_of(named)
            return self.set(e, t)
        if isinstance(e, Select):
            return self.set(e, self.select(e))
        if isinstance(e, Call):
            return self.set(e, self.call(e))
        if isinstance(e, CreateList):
            return self.set(e, self.create_list(e))
        if isinstance(e, CreateMap):
            return self.set(e, self.create_map(e))
        if isinstance(e, Comprehension):
            return self.set(e, self.comprehension(e))
        if isinstance(e, CreateStruct):
            raise CheckError(f"message construction '{e.message_name}{{...}}' is not supported")
        raise CheckError("an expression of an unknown kind")

    def qualified(self, e: Expr) -> str | None:
        """The dotted name ``e`` spells when it is not a variable (``google.protobuf.X``)."""
        if isinstance(e, Ident):
            return None if self.lookup(e.name) is not None else e.name
        if isinstance(e, Select) and not e.test_only:
            head = self.qualified(e.operand)
            return None if head is None else f"{head}.{e.field}"
        return None

    def select(self, e: Select) -> T:
        name = self.qualified(e)
        if name is not None and name in _TYPE_NAMES:
            return type_of(_TYPE_NAMES[name])
        operand = self.substitute(self.check(e.operand))
        if e.test_only:
            self.field(operand, e.field)
            return BOOL
        return self.field(operand, e.field)

    def field(self, operand: T, name: str) -> T:
        if operand.kind == "optional":
            return optional_of(self.field(operand.params[0], name))
        if operand.kind == "struct" and operand.decl is not None:
            sub = operand.decl.fields.get(name)
            if sub is None:
                raise CheckError(f"undefined field '{name}'")
            return decl_type(sub)
        if operand.kind == "map":
            return operand.params[1]
        if operand.kind in ("dyn", "param"):
            return DYN
        raise CheckError(f"type '{operand}' does not support field selection")

    def call(self, e: Call) -> T:
        if e.function == "_?._":
            operand = self.substitute(self.check(e.args[0]))
            field_name = e.args[1]
            if not isinstance(field_name, Literal) or field_name.kind != "string":
                raise CheckError("an optional field selection needs a field name")
            self.check(field_name)
            self.overloads[e.id] = ["select_optional_field"]
            t = self.field(operand, field_name.value)
            return t if t.kind == "optional" else optional_of(t)
        target = e.target
        name = e.function
        if target is not None:
            head = self.qualified(target)
            if head is not None and head not in _TYPE_NAMES:
                # Not a variable: a namespaced function (optional.of, strings.quote, ...).
                name, target = f"{head}.{name}", None
        overloads = functions().get(name)
        if overloads is None:
            raise CheckError(f"undeclared reference to function '{name}'")
        arg_types = []
        if target is not None:
            arg_types.append(self.check(target))
        arg_types += [self.check(a) for a in e.args]
        return self.resolve(e, name, overloads, target is not None, arg_types)

    def resolve(
        self, e: Call, name: str, overloads: list[Overload], member: bool, args: list[T]
    ) -> T:
        matched: list[str] = []
        result: T | None = None
        for overload in overloads:
            if overload.member != member or len(overload.params) != len(args):
                continue
            rename: dict[str, T] = {}
            params = [_instantiate(p, rename, self.fresh) for p in overload.params]
            trial = dict(self.mapping)
            if not all(_assignable(trial, p, a) for p, a in zip(params, args, strict=True)):
                continue
            self.mapping = trial
            matched.append(overload.id)
            out = self.substitute(_instantiate(overload.result, rename, self.fresh))
            if result is None:
                result = out
            elif result.kind != "dyn" and result != out:
                result = DYN
        if result is None:
            if name in ("_==_", "_!=_"):
                # cel-go's checker joins mismatched operands more leniently than this one.
                self.overloads[e.id] = ["equals" if name == "_==_" else "not_equals"]
                return BOOL
            shown = ", ".join(str(self.substitute(a)) for a in args)
            raise CheckError(f"found no matching overload for '{name}' applied to ({shown})")
        self.overloads[e.id] = matched
        return result

    def create_list(self, e: CreateList) -> T:
        if not e.elements:
            return list_of(self.fresh())
        elem: T | None = None
        for i, x in enumerate(e.elements):
            t = self.substitute(self.check(x))
            if i in e.optional_indices and t.kind == "optional":
                t = t.params[0]
            elem = t if elem is None or elem == t else DYN
        assert elem is not None
        return list_of(elem)

    def create_map(self, e: CreateMap) -> T:
        if not e.entries:
            return map_of(self.fresh(), self.fresh())
        key: T | None = None
        value: T | None = None
        for k, v, optional in e.entries:
            kt = self.substitute(self.check(k))
            vt = self.substitute(self.check(v))
            if optional and vt.kind == "optional":
                vt = vt.params[0]
            key = kt if key is None or key == kt else DYN
            value = vt if value is None or value == vt else DYN
        assert key is not None and value is not None
        return map_of(key, value)

    def comprehension(self, e: Comprehension) -> T:
        iter_range = self.substitute(self.check(e.iter_range))
        if iter_range.kind == "list":
            elem = iter_range.params[0]
            first, second = (INT, elem) if e.iter_var2 else (elem, DYN)
        elif iter_range.kind == "map":
            first, second = iter_range.params[0], iter_range.params[1]
        elif iter_range.kind in ("dyn", "param"):
            first = second = DYN
        else:
            raise CheckError(f"'{iter_range}' cannot be the range of a comprehension")
        accu = self.check(e.accu_init)
        self.scopes.append((e.accu_var, accu))
        self.scopes.append((e.iter_var, first))
        if e.iter_var2:
            self.scopes.append((e.iter_var2, second))
        self.check(e.loop_condition)
        step = self.check(e.loop_step)
        if not _assignable(self.mapping, accu, step):
            raise CheckError(f"comprehension step of type '{step}' does not fit '{accu}'")
        del self.scopes[-(3 if e.iter_var2 else 2) :]
        self.scopes.append((e.accu_var, self.substitute(accu)))
        result = self.check(e.result)
        self.scopes.pop()
        return result


def _instantiate(t: T, rename: dict[str, T], fresh: object) -> T:
    if t.kind == "param":
        if t.name not in rename:
            rename[t.name] = fresh()  # type: ignore[operator]
        return rename[t.name]
    if t.params:
        return T(t.kind, tuple(_instantiate(p, rename, fresh) for p in t.params), t.name, t.decl)
    return t


def _resolve(mapping: dict[str, T], t: T) -> T:
    while t.kind == "param" and t.name in mapping:
        t = mapping[t.name]
    return t


_NULLABLE = frozenset({"struct", "opaque", "optional", "null", "duration", "timestamp", "dyn"})


def _assignable(mapping: dict[str, T], expected: T, actual: T) -> bool:
    """Whether a value of ``actual`` fits where ``expected`` is wanted (binding parameters)."""
    expected = _resolve(mapping, expected)
    actual = _resolve(mapping, actual)
    if expected.kind == "param":
        if actual.kind == "param" and actual.name == expected.name:
            return True
        if _occurs(mapping, expected.name, actual):
            return False
        mapping[expected.name] = actual
        return True
    if actual.kind == "param":
        if _occurs(mapping, actual.name, expected):
            return False
        mapping[actual.name] = expected
        return True
    if expected.kind == "dyn" or actual.kind == "dyn":
        return True
    if actual.kind == "null":
        return expected.kind in _NULLABLE
    if expected.kind != actual.kind or expected.name != actual.name:
        return False
    if len(expected.params) != len(actual.params):
        return False
    return all(
        _assignable(mapping, a, b) for a, b in zip(expected.params, actual.params, strict=True)
    )


def _occurs(mapping: dict[str, T], name: str, t: T) -> bool:
    t = _resolve(mapping, t)
    if t.kind == "param":
        return t.name == name
    return any(_occurs(mapping, name, p) for p in t.params)
