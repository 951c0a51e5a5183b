"""Hypothesis strategies of hostile requests, built from the protobuf
descriptors (issue 13, item 9), so every method of a service is fuzzed
without a hand-written strategy per message, and a new field is covered the
day it is added.

A request is a :class:`Request`: a method, the request's bytes (a message
built from the descriptor and serialized, or random bytes, or a message
whose string fields hold a lone surrogate, which protobuf itself refuses to
build, so its bytes are written by hand) and the call's metadata (no token,
a wrong token, a malformed header, the right token, internal credentials).
"""

from __future__ import annotations

import dataclasses
import json

from google.protobuf.descriptor import FieldDescriptor as F
from hypothesis import strategies as st

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
UINT64 = (0, 2**64 - 1)


def deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


NASTY_TEXT = [
    "",
    " ",
    "0",
    "-1",
    "nope",
    "\x00",
    "é",
    "\u202e",
    "\ufeff",
    "🚂" * 3,
    "a" * 65,
    "a" * 5000,
    '{"type": "pass"}',
    "null",
    "[]",
    "{}",
    '{"\\ud800": 1}',
    '["\\udfff"]',
    '{"type": "\\ud83d"}',
    deep_json(40),
    deep_json(1000),
    deep_json(100_000),
    "{" + " " * 60_000 + "}",
    '{"a":' * 500 + "1" + "}" * 500,
    json.dumps({"type": "bid", "amount": 10**30}),
    json.dumps({"type": "bid", "amount": -1}),
    json.dumps({"type": ["x"] * 1000}),
]


def text_for(known: list[str]) -> st.SearchStrategy[str]:
    """Strings of a field: ``known`` good values (real ids, titles), nasty
    fixed ones and random unicode (lone surrogates excluded: protobuf refuses
    them; :func:`surrogate_bytes` sends them)."""
    return st.one_of(
        st.sampled_from(known) if known else st.nothing(),
        st.sampled_from(NASTY_TEXT),
        st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
        st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=3).map(
            lambda s: s * 3000
        ),
    )


def _scalar(field, known: dict[str, list[str]]):
    t = field.type
    if t == F.TYPE_STRING:
        return text_for(known.get(field.name, []))
    if t == F.TYPE_BOOL:
        return st.booleans()
    if t == F.TYPE_ENUM:
        return st.integers(-3, 12)
    if t == F.TYPE_BYTES:
        return st.binary(max_size=64)
    if t in (F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32):
        return st.one_of(st.integers(-3, 12), st.integers(*INT32))
    if t in (F.TYPE_UINT32, F.TYPE_FIXED32):
        return st.integers(0, 2**32 - 1)
    if t in (F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64):
        return st.integers(*INT64)
    if t in (F.TYPE_UINT64, F.TYPE_FIXED64):
        return st.integers(*UINT64)
    if t in (F.TYPE_DOUBLE, F.TYPE_FLOAT):
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    return st.none()


def message(cls, known: dict[str, list[str]], depth: int = 0) -> st.SearchStrategy:
    """Messages of ``cls`` with any subset of fields set to hostile values."""
    fields = {}
    for field in cls.DESCRIPTOR.fields:
        if _is_map(field):  # map<K, V>: a dict of hostile keys to hostile values
            entry = field.message_type.fields_by_name
            if entry["value"].type == F.TYPE_MESSAGE:
                continue  # no such map in our protos
            fields[field.name] = st.dictionaries(
                _scalar(entry["key"], known), _scalar(entry["value"], known), max_size=4
            )
            continue
        if field.type == F.TYPE_MESSAGE:
            if depth >= 2 or field.message_type.full_name.startswith("google.protobuf"):
                continue
            value = _submessage(cls, field, known, depth)
        else:
            value = _scalar(field, known)
        if field.is_repeated:
            value = st.lists(value, max_size=4)
        fields[field.name] = value

    def build(values: dict):
        msg = cls()
        for name, value in values.items():
            field = cls.DESCRIPTOR.fields_by_name[name]
            try:
                if _is_map(field):
                    target = getattr(msg, name)
                    for k, v in value.items():
                        target[k] = v
                elif field.is_repeated:
                    if field.type == F.TYPE_MESSAGE:
                        for v in value:
                            getattr(msg, name).add().CopyFrom(v)
                    else:
                        getattr(msg, name).extend(value)
                elif field.type == F.TYPE_MESSAGE:
                    getattr(msg, name).CopyFrom(value)
                else:
                    setattr(msg, name, value)
            except (ValueError, TypeError):  # an enum protobuf refuses, say
                continue
        return msg

    return st.fixed_dictionaries({}, optional=fields).map(build)


def _is_map(field) -> bool:
    return field.type == F.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def _submessage(cls, field, known, depth):
    from google.protobuf import message_factory

    sub = message_factory.GetMessageClass(field.message_type)
    return message(sub, known, depth + 1)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def surrogate_bytes(cls) -> st.SearchStrategy[bytes]:
    """A request of ``cls`` whose first string field holds text with a lone
    surrogate encoded as UTF-8 would encode it (invalid UTF-8 on the wire)."""
    strings = [f for f in cls.DESCRIPTOR.fields if f.type == F.TYPE_STRING]
    if not strings:
        return st.binary(max_size=8)

    def encode(args):
        field, text = args
        raw = text.encode("utf-8", "surrogatepass")
        return _varint(field.number << 3 | 2) + _varint(len(raw)) + raw

    return st.tuples(
        st.sampled_from(strings),
        st.sampled_from(["\ud800", "a\udfffb", "\ud83d", "x" * 10 + "\udc00"]),
    ).map(encode)


@dataclasses.dataclass(frozen=True)
class Request:
    """One fuzzed call: ``method`` (``/package.Service/Method``), the request
    bytes, the metadata, whether the method streams its answer."""

    method: str
    body: bytes
    metadata: tuple[tuple[str, str], ...]
    streaming: bool


def requests(
    service_descriptor,
    messages: dict[str, type],
    known: dict[str, list[str]],
    credentials: list[tuple[tuple[str, str], ...]],
) -> st.SearchStrategy[Request]:
    """Requests to every method of ``service_descriptor`` (``messages``:
    method name -> request class)."""
    per_method = []
    for method in service_descriptor.methods:
        cls = messages[method.name]
        path = f"/{service_descriptor.full_name}/{method.name}"
        bodies = st.one_of(
            message(cls, known).map(lambda m: m.SerializeToString()),
            message(cls, known).map(lambda m: m.SerializeToString()),
            st.binary(max_size=256),
            surrogate_bytes(cls),
        )
        per_method.append(
            st.builds(
                Request,
                st.just(path),
                bodies,
                st.sampled_from(credentials),
                st.just(method.server_streaming),
            )
        )
    return st.one_of(per_method)
