"""Every route that gRPC offers is on HTTP (issue 32: "a test walks the OpenAPI and checks every
route that gRPC offers"): each RPC of each service in the generated descriptors
(``roundhouse.v1.*_pb2``, found by walking the package, so a new ``.proto`` is covered at once)
is either mapped in :data:`services.web.grpc_routes.ROUTES` to a route the OpenAPI document has,
with that method, or listed in :data:`~services.web.grpc_routes.INTERNAL_ONLY` with a reason."""

from __future__ import annotations

import importlib
import pkgutil

import roundhouse.v1
from services.web.grpc_routes import INTERNAL_ONLY, ROUTES
from services.web.openapi import document


def grpc_methods() -> set[str]:
    """``package.Service/Method`` of every RPC in every generated ``*_pb2`` module."""
    found = set()
    for module in pkgutil.iter_modules(roundhouse.v1.__path__):
        if not module.name.endswith("_pb2"):
            continue
        pb2 = importlib.import_module(f"roundhouse.v1.{module.name}")
        for service in pb2.DESCRIPTOR.services_by_name.values():
            found |= {f"{service.full_name}/{m.name}" for m in service.methods}
    return found


def test_the_walk_finds_the_public_services():
    services = {m.split("/")[0] for m in grpc_methods()}
    assert {
        "roundhouse.v1.Lobby",
        "roundhouse.v1.Accounts",
        "roundhouse.v1.Archive",
        "roundhouse.v1.Tournaments",
        "roundhouse.v1.GameRules",
    } <= services


def test_every_public_rpc_has_its_http_route_in_the_openapi():
    methods = grpc_methods()
    unmapped = sorted(methods - ROUTES.keys() - INTERNAL_ONLY.keys())
    assert not unmapped, f"RPCs with no HTTP route and no reason: {unmapped}"
    both = sorted(ROUTES.keys() & INTERNAL_ONLY.keys())
    assert not both, f"RPCs both mapped and internal: {both}"
    stale = sorted((ROUTES.keys() | INTERNAL_ONLY.keys()) - methods)
    assert not stale, f"entries naming no RPC of the protos: {stale}"
    assert all(reason.startswith("internal") for reason in INTERNAL_ONLY.values())
    paths = document()["paths"]
    missing = sorted(
        f"{rpc}: {verb} {path}"
        for rpc, (verb, path) in ROUTES.items()
        if verb.lower() not in paths.get(path, {})
    )
    assert not missing, f"routes not in the OpenAPI document: {missing}"
