"""Consistency of the Kubernetes manifests in deploy/k8s/ with the code:
every module a container runs exists, Services select real pods and ports,
the settings ConfigMap parses with the settings model and names a reachable
rules Service for every title, and every server has probes and resources."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import yaml

from services.common.registry import TITLE_MODULES
from services.common.settings import Settings

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


def load_all() -> list[dict]:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        docs += [d for d in yaml.safe_load_all((K8S / name).read_text()) if d]
    return docs


DOCS = load_all()


def kind(k: str) -> list[dict]:
    return [d for d in DOCS if d["kind"] == k]


def workloads() -> list[dict]:
    return kind("Deployment") + kind("StatefulSet")


def settings_from_configmap() -> Settings:
    (cm,) = kind("ConfigMap")
    env = {k[len("ROUNDHOUSE_") :].lower(): v for k, v in cm["data"].items()}
    env["rules_addresses"] = json.loads(env["rules_addresses"])
    return Settings(**env)


def test_every_container_runs_an_existing_module():
    for w in workloads():
        for c in w["spec"]["template"]["spec"]["containers"]:
            cmd = c.get("command") or []
            if cmd[:2] == ["python", "-m"]:
                assert importlib.util.find_spec(cmd[2]) is not None, cmd
            elif cmd[:1] == ["celery"]:
                assert importlib.util.find_spec(cmd[2]) is not None, cmd


@pytest.mark.parametrize("service", kind("Service"), ids=lambda s: s["metadata"]["name"])
def test_services_select_pods_with_their_ports(service):
    selector = service["spec"]["selector"]
    matches = [
        w
        for w in workloads()
        if selector.items() <= w["spec"]["template"]["metadata"]["labels"].items()
    ]
    assert matches, f"service {service['metadata']['name']} selects no pods"
    port_names = {
        p["name"]
        for w in matches
        for c in w["spec"]["template"]["spec"]["containers"]
        for p in c.get("ports", [])
    }
    for port in service["spec"]["ports"]:
        assert port["targetPort"] in port_names


def test_settings_configmap_parses_and_points_at_real_services():
    settings = settings_from_configmap()
    services = {s["metadata"]["name"]: s for s in kind("Service")}
    assert set(settings.rules_addresses) == set(TITLE_MODULES)
    for title, address in [*settings.rules_addresses.items(), ("lobby", settings.lobby_address)]:
        host, port = address.rsplit(":", 1)
        assert host in services, f"{title}: no Service {host}"
        assert int(port) in [p["port"] for p in services[host]["spec"]["ports"]]
    assert settings.redis_url.split("//")[1].split(":")[0] in services


def test_grpc_servers_have_probes_and_every_container_has_resources():
    for w in workloads():
        for c in w["spec"]["template"]["spec"]["containers"]:
            assert c["resources"]["requests"], c["name"]
            assert "memory" in c["resources"]["limits"], c["name"]
            if any(p["name"] == "grpc" for p in c.get("ports", [])):
                assert "grpc" in c["readinessProbe"]
                assert "grpc" in c["livenessProbe"]


def test_bot_worker_consumes_the_queue_the_dispatcher_fills():
    from services.bots.celery_app import bot_queue

    settings = settings_from_configmap()
    (worker,) = [w for w in kind("Deployment") if w["metadata"]["name"] == "bot-worker"]
    cmd = worker["spec"]["template"]["spec"]["containers"][0]["command"]
    assert cmd[cmd.index("-Q") + 1] == bot_queue(settings.key_prefix)
