"""Type-check CEL rules against their schema, as the API server does when a CRD is created.

Rules are evaluated with ``self`` dynamically typed (``modelplane.kube.rules``), which cannot
notice a rule naming a field the schema lacks until that path is evaluated. The API server
type-checks every rule against the schema at load time, so this module does too: each object
node becomes a proto message built at runtime (fields named as CEL sees them, escaped), and each
rule is compiled once more with ``self`` bound to its node's type.

Where cel-cpp's checker is stricter than cel-go's as Kubernetes configures it, the type is left
dynamic rather than reject a rule the API server accepts: ``number`` fields (cel-cpp has no
cross-type numeric comparisons, so ``self.weight > 0`` would not check), int-or-string values,
preserved unknown fields, nullable values, and lists or maps of lists or maps.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool

from modelplane.kube.cel import runtime
from modelplane.kube.cel.names import escape
from modelplane.kube.schema import Schema

_F = descriptor_pb2.FieldDescriptorProto
_PACKAGES = itertools.count()
_SCALARS = {"string": (_F.TYPE_STRING, "STRING"), "integer": (_F.TYPE_INT64, "INT")}
_SCALARS["boolean"] = (_F.TYPE_BOOL, "BOOL")
_VALUE = ".google.protobuf.Value"
_POSITION = re.compile(r"^<input>:(\d+):(\d+): ")
_STRUCT = re.compile(r" not found in struct '[^']*'")


class _Builder:
    """Messages for the object nodes of one schema, in one runtime proto file."""

    def __init__(self) -> None:
        self.package = f"modelplane.schema{next(_PACKAGES)}"
        self.file = descriptor_pb2.FileDescriptorProto(
            name=f"{self.package.replace('.', '/')}.proto",
            package=self.package,
            syntax="proto3",
            dependency=["google/protobuf/struct.proto"],
        )
        self.messages: dict[int, str] = {}

    def message(self, node: Schema, root: bool = False) -> str:
        """The full name of the message for an object node with properties."""
        if id(node) in self.messages:
            return self.messages[id(node)]
        name = f"M{len(self.messages)}"
        full = f"{self.package}.{name}"
        self.messages[id(node)] = full
        proto = self.file.message_type.add(name=name)
        props = dict(node.properties or {})
        if root:
            # Rules at the root see metadata.name and metadata.generateName.
            props["metadata"] = Schema(
                type="object",
                properties={"name": Schema(type="string"), "generateName": Schema(type="string")},
            )
        number = 0
        for prop, sub in props.items():
            field_name = escape(prop)
            if field_name is None:
                continue
            number += 1
            field = proto.field.add(name=field_name, number=number, json_name=f"f{number}")
            self._field(proto, field, sub)
        return full

    def _field(self, proto: Any, field: Any, node: Schema) -> None:
        field.label = _F.LABEL_OPTIONAL
        if node.type == "array" and node.items is not None and _is_element(node.items):
            field.label = _F.LABEL_REPEATED
            self._scalar_or_message(field, node.items)
        elif _is_map(node) and node.additional is not None and _is_element(node.additional):
            entry = proto.nested_type.add(name=f"{_camel(field.name)}Entry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
            value = entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL)
            self._scalar_or_message(value, node.additional)
            field.label = _F.LABEL_REPEATED
            field.type = _F.TYPE_MESSAGE
            field.type_name = f".{self.package}.{proto.name}.{entry.name}"
        elif node.type == "array":
            field.label = _F.LABEL_REPEATED
            field.type = _F.TYPE_MESSAGE
            field.type_name = _VALUE
        else:
            self._scalar_or_message(field, node)

    def _scalar_or_message(self, field: Any, node: Schema) -> None:
        if _is_object(node):
            field.type = _F.TYPE_MESSAGE
            field.type_name = "." + self.message(node)
        elif _is_scalar(node):
            field.type = _SCALARS[node.type][0]
        else:
            field.type = _F.TYPE_MESSAGE
            field.type_name = _VALUE


def _camel(name: str) -> str:
    """protoc's name for a map field's entry message (``match_labels`` → ``MatchLabels``)."""
    out: list[str] = []
    upper = True
    for ch in name:
        if ch == "_":
            upper = True
        elif upper:
            out.append(ch.upper())
            upper = False
        else:
            out.append(ch)
    return "".join(out)


def _is_object(node: Schema) -> bool:
    return (
        not node.nullable
        and node.type == "object"
        and node.properties is not None
        and not node.preserve_unknown
        and node.additional is None
    )


def _is_map(node: Schema) -> bool:
    return (
        not node.nullable
        and node.type == "object"
        and not node.properties
        and not node.preserve_unknown
    )


def _is_element(node: Schema) -> bool:
    """Whether a list item or map value can be typed (not itself a list or map)."""
    return _is_object(node) or _is_scalar(node)


def _is_scalar(node: Schema) -> bool:
    # A nullable value may be compared with null, which a typed scalar cannot.
    return node.type in _SCALARS and not node.int_or_string and not node.nullable


def _cel_type(builder: _Builder, node: Schema, root: bool = False) -> Any:
    """The type ``self`` has at ``node``."""
    if _is_object(node) or (root and node.type == "object" and not node.preserve_unknown):
        # The root is an object even when its schema declares no properties: it has metadata.
        return cel.Type(builder.message(node, root=root))
    if _is_scalar(node):
        return getattr(cel.Type, _SCALARS[node.type][1])
    if node.type == "array" and node.items is not None and _is_element(node.items):
        return cel.Type.List(_cel_type(builder, node.items))
    if _is_map(node) and node.additional is not None and _is_element(node.additional):
        return cel.Type.Map(cel.Type.STRING, _cel_type(builder, node.additional))
    return cel.Type.DYN


def check_rules(schema: Schema) -> list[str]:
    """Compile every rule typed against its node; one message per rule that does not check."""
    sites: list[tuple[str, Schema]] = []
    _collect(schema, "openAPIV3Schema", sites)
    if not sites:
        return []
    env = _environment(schema, sites)
    if env is None:
        return []
    failures: list[str] = []
    for i, (path, node) in enumerate(sites):
        for j, raw in enumerate(node.rules):
            failures += _rule_failures(
                env, f"__node{i}", f"{path}.x-kubernetes-validations[{j}]", raw
            )
    return failures


def _environment(schema: Schema, sites: list[tuple[str, Schema]]) -> Any:
    """A CEL environment declaring ``__node<i>`` with the type of each site's node; None when
    the runtime proto cannot express the schema."""
    builder = _Builder()
    variables: dict[str, Any] = {}
    for i, (_, node) in enumerate(sites):
        variables[f"__node{i}"] = _cel_type(builder, node, root=node is schema)
    pool = descriptor_pool.DescriptorPool()
    for proto in _dependencies():
        pool.Add(proto)
    try:
        pool.Add(builder.file)
        return cel.NewEnv(
            pool,
            variables=variables,
            extensions=runtime.extensions(),
            functions=runtime._functions(),
        )
    except Exception:  # a schema shape the runtime proto cannot express: leave it to dyn
        return None


def _rule_failures(env: Any, node: str, where: str, raw: dict[str, Any]) -> list[str]:
    """What does not check in one rule, then in its messageExpression once the rule compiles."""
    source = str(raw.get("rule", ""))
    old_self = f"optional.of({node})" if raw.get("optionalOldSelf") else node
    prefix = f"cel.bind(self, {node}, cel.bind(oldSelf, {old_self}, ("
    try:
        compiled = env.compile(f"{prefix}{source}\n)))")
    except RuntimeError as e:
        return [f"{where}: rule {source!r}: {_message(str(e), len(prefix))}"]
    failures = []
    result = compiled.return_type()
    if result != cel.Type.BOOL and result != cel.Type.DYN:
        failures.append(
            f"{where}: rule {source!r}: rule must evaluate to bool, not {result.name()}"
        )
    message = raw.get("messageExpression")
    if message:
        failures += _message_failures(env, node, where, message)
    return failures


def _message_failures(env: Any, node: str, where: str, message: str) -> list[str]:
    prefix = f"cel.bind(self, {node}, ("
    try:
        kind = env.compile(f"{prefix}{message}\n))").return_type()
    except RuntimeError as e:
        return [f"{where}: messageExpression {message!r}: {_message(str(e), len(prefix))}"]
    if kind != cel.Type.STRING and kind != cel.Type.DYN:
        return [
            f"{where}: messageExpression {message!r}: must evaluate to string, not {kind.name()}"
        ]
    return []


def _collect(node: Schema, where: str, out: list[tuple[str, Schema]]) -> None:
    if not node.has_rules:
        return
    if node.rules:
        out.append((where, node))
    for sub, below in node.children(where):
        _collect(sub, below, out)


def _dependencies() -> list[descriptor_pb2.FileDescriptorProto]:
    from google.protobuf import struct_pb2

    struct = descriptor_pb2.FileDescriptorProto()
    struct_pb2.DESCRIPTOR.CopyToProto(struct)
    return [struct, runtime.k8scel_file()]


def _message(error: str, offset: int) -> str:
    # The first line of cel-cpp's message, with the column counted in the rule as written.
    line = error.removeprefix("INVALID_ARGUMENT: ").removeprefix("ERROR: ").splitlines()[0]
    line = _STRUCT.sub("", line)
    match = _POSITION.match(line)
    if match:
        column = max(int(match.group(2)) - offset, 1)
        line = f"<input>:{match.group(1)}:{column}: {line[match.end() :]}"
    return line
