"""Consistency of the Kubernetes manifests in deploy/k8s/ with the code.

Checked here: every container runs a module that exists; Services select real
pods and ports; the settings each container gets (ConfigMap + its own env, with
Kubernetes' ``$(VAR)`` substitution, and Secrets: ours or the ones the operators
make) parse with the settings model; the gRPC addresses are ``dns:///`` names of
headless rules Services (the lobby's a ClusterIP one) whose port is the port the
server listens on; gRPC pods stop gracefully (preStop, grace period); metrics
ports are exposed and annotated; the stores are custom resources of their
operators (a Redis Cluster of 3 masters with a replica each, a CloudNativePG
cluster, a RabbitMQ cluster) with pinned images, and the URLs the processes use
name what those operators make (Services, generated Secrets); Redis is
password-protected, never evicts and fits its memory limit; the Secrets are
marked placeholders; the NetworkPolicies isolate every workload (the operators'
pods too) and allow exactly the intended flows; the optional KEDA Component
agrees with the queue, RabbitMQ and its Secret; and ``kubectl kustomize`` renders
what these tests read.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from pathlib import Path
from unittest import mock
from urllib.parse import quote, urlsplit

import pytest
import yaml
from redis.connection import parse_url

from services.bots.celery_app import bot_queue, is_amqp
from services.platform.db import database_url
from services.platform.reviews import review_queue
from services.platform.settings import Settings
from services.rules.titles import TITLE_MODULES

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KEDA = K8S / "keda"
NAMESPACE = "roundhouse"
IMAGE = "roundhouse:latest"
KUBECTL = shutil.which("kubectl")


def load_kustomization(directory: Path) -> list[dict]:
    """The objects a kustomization (or Component) lists, read as plain YAML
    (no patches applied; ``kubectl kustomize`` is checked separately)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        path = directory / name
        assert path.is_file(), f"{directory}/kustomization.yaml lists a missing file {name}"
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


DOCS = load_kustomization(K8S)
KEDA_DOCS = load_kustomization(KEDA)


def kind(k: str, docs: list[dict] = DOCS) -> list[dict]:
    return [d for d in docs if d["kind"] == k]


def named(k: str, name: str, docs: list[dict] = DOCS) -> dict:
    (doc,) = [d for d in kind(k, docs) if d["metadata"]["name"] == name]
    return doc


def workloads() -> list[dict]:
    return kind("Deployment") + kind("StatefulSet")


def pod_spec(w: dict) -> dict:
    return w["spec"]["template"]["spec"]


def pod_labels(w: dict) -> dict[str, str]:
    return w["spec"]["template"]["metadata"]["labels"]


def containers(w: dict) -> list[dict]:
    return pod_spec(w)["containers"]


def roundhouse_containers() -> list[tuple[dict, dict]]:
    """(workload, container) for every container running the Roundhouse image."""
    return [(w, c) for w in workloads() for c in containers(w) if c["image"] == IMAGE]


def secret_value(name: str, key: str) -> str:
    """A key of a Secret of secrets.yaml or of one an operator makes (by its naming
    convention, ``generated_secrets``); fails on a Secret or key nobody makes."""
    ours = [d for d in kind("Secret") if d["metadata"]["name"] == name]
    if ours:
        return ours[0]["stringData"][key]
    generated = generated_secrets()
    assert name in generated, f"no Secret {name}: not in secrets.yaml, and no operator makes it"
    assert key in generated[name], f"the operator's Secret {name} has no key {key}"
    return generated[name][key]


def container_env(c: dict) -> dict[str, str]:
    """The environment Kubernetes gives a container: ``envFrom`` ConfigMaps,
    then ``env`` in order, where ``$(NAME)`` expands to a variable defined
    before it (an undefined reference stays as written, as in Kubernetes)."""
    env: dict[str, str] = {}
    for source in c.get("envFrom", []):
        env.update(named("ConfigMap", source["configMapRef"]["name"])["data"])
    for var in c.get("env", []):
        if "value" in var:
            env[var["name"]] = re.sub(
                r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), var["value"]
            )
        else:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = secret_value(ref["name"], ref["key"])
    return env


def settings_of(c: dict) -> Settings:
    """The settings the process in container ``c`` reads (a clean environment
    holding only what the manifests give it)."""
    with mock.patch.dict(os.environ, container_env(c), clear=True):
        return Settings()


def service_port(service: dict, port: int) -> dict:
    (p,) = [p for p in service["spec"]["ports"] if p["port"] == port]
    return p


def selected_workloads(service: dict) -> list[dict]:
    selector = service["spec"]["selector"]
    return [w for w in workloads() if selector.items() <= pod_labels(w).items()]


def container_port(w: dict, name_or_number: str | int) -> int:
    for c in containers(w):
        for p in c.get("ports", []):
            if name_or_number in (p["name"], p["containerPort"]):
                return p["containerPort"]
    raise AssertionError(f"{w['metadata']['name']} has no port {name_or_number}")


def memory_bytes(quantity: str) -> int:
    """A Kubernetes quantity (``2Gi``, ``512Mi``) or a Redis size (``1400mb``)."""
    units = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "kb": 2**10, "mb": 2**20, "gb": 2**30}
    m = re.fullmatch(r"(\d+)([a-zA-Z]*)", quantity)
    assert m, quantity
    return int(m[1]) * units.get(m[2].lower(), 1)


# --------------------------------------------------------------- what the operators make
#
# The stores are custom resources (redis.yaml, postgres.yaml, rabbitmq.yaml) of operators
# installed beside the stack, at the versions docs/deploy.md pins. Each operator makes
# Services, Secrets and pods from its resource by fixed conventions (read in the
# operators' sources at those versions). The functions below derive them from the
# resources, so that the checks further down follow a URL or a Secret reference to
# something that will exist, and check the NetworkPolicies against the pods' real labels.

REDIS_CLUSTER = ("redis.redis.opstreelabs.in/v1beta2", "RedisCluster")  # redis-operator 0.26
POSTGRES_CLUSTER = ("postgresql.cnpg.io/v1", "Cluster")  # CloudNativePG 1.30
RABBITMQ_CLUSTER = ("rabbitmq.com/v1beta1", "RabbitmqCluster")  # cluster-operator 2.22


def store(api_kind: tuple[str, str]) -> dict:
    """The one custom resource of that apiVersion and kind."""
    api, k = api_kind
    (doc,) = [d for d in DOCS if (d["apiVersion"], d["kind"]) == (api, k)]
    return doc


def store_name(api_kind: tuple[str, str]) -> str:
    return store(api_kind)["metadata"]["name"]


def redis_port() -> int:
    return store(REDIS_CLUSTER)["spec"].get("port", 6379)  # the CRD's default


def generated_services() -> dict[str, dict[str, int]]:
    """Service name -> {port name: port} the operators make."""
    redis, pg, mq = (
        store_name(REDIS_CLUSTER),
        store_name(POSTGRES_CLUSTER),
        store_name(RABBITMQ_CLUSTER),
    )
    services = {
        f"{redis}-{role}{suffix}": {"redis-client": redis_port()}
        for role in ("leader", "follower")
        for suffix in ("", "-headless", "-additional")
    }
    services[f"{redis}-master"] = {"redis-client": redis_port()}
    services |= {f"{pg}-{suffix}": {"postgres": 5432} for suffix in ("rw", "ro", "r")}
    services[mq] = {"amqp": 5672, "management": 15672, "prometheus": 15692}
    services[f"{mq}-nodes"] = {"epmd": 4369, "cluster-rpc": 25672}
    return services


def generated_secrets() -> dict[str, dict[str, str]]:
    """Secret name -> its data, for the Secrets the operators generate (the keys they
    write; made-up credentials, with characters a URL must escape where the operator
    allows them)."""
    pg = store(POSTGRES_CLUSTER)
    initdb = pg["spec"]["bootstrap"]["initdb"]
    owner, dbname, pg_password = initdb["owner"], initdb["database"], "gen+pw/x=1"
    pg_host = f"{pg['metadata']['name']}-rw"
    uri = (
        f"postgresql://{quote(owner, safe='')}:{quote(pg_password, safe='')}"
        f"@{pg_host}.{NAMESPACE}:5432/{dbname}"
    )
    mq = store_name(RABBITMQ_CLUSTER)
    # base64 URL-safe alphabet (the operator's generator)
    mq_user, mq_password = "default_user_abcDEF123-_xyz0987654", "Zm9vYmFyLWJhel9xdXV4LTAxMjM0NTY3"
    mq_host = f"{mq}.{NAMESPACE}.svc"
    return {
        f"{pg['metadata']['name']}-app": {
            "username": owner,
            "user": owner,
            "password": pg_password,
            "dbname": dbname,
            "host": pg_host,
            "port": "5432",
            "pgpass": f"{pg_host}:5432:{dbname}:{owner}:{pg_password}\n",
            "uri": uri,
            "jdbc-uri": "jdbc:" + uri,
            "fqdn-uri": uri.replace(f".{NAMESPACE}:", f".{NAMESPACE}.svc.cluster.local:"),
            "fqdn-jdbc-uri": "jdbc:"
            + uri.replace(f".{NAMESPACE}:", f".{NAMESPACE}.svc.cluster.local:"),
        },
        f"{mq}-default-user": {
            "username": mq_user,
            "password": mq_password,
            "default_user.conf": f"default_user = {mq_user}\ndefault_pass = {mq_password}\n",
            "provider": "rabbitmq",
            "type": "rabbitmq",
            "host": mq_host,
            "port": "5672",
            "connection_string": f"amqp://{mq_user}:{mq_password}@{mq_host}:5672/",
        },
    }


def store_service_port(host: str, port: int) -> str:
    """The name of ``port`` on the operator-made Service ``host`` (``name``,
    ``name.namespace`` or ``name.namespace.svc``); fails if no operator makes it."""
    name, *rest = host.split(".")
    assert rest in ([], [NAMESPACE], [NAMESPACE, "svc"]), host
    services = generated_services()
    assert name in services, f"{host}: no operator makes that Service"
    (port_name,) = [n for n, number in services[name].items() if number == port]
    return port_name


def operator_pods() -> list[dict]:
    """The stores' pods, shaped like a workload (name, pod labels, containers' ports),
    with the labels and ports their operators give them. A port the container does
    not declare (Redis', RabbitMQ's distribution port) has no name."""

    def pods(name: str, labels: dict[str, str], ports: list[tuple[str | None, int]]) -> dict:
        return {
            "metadata": {"name": name},
            "spec": {
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": name,
                                "ports": [{"name": n, "containerPort": c} for n, c in ports],
                            }
                        ]
                    },
                }
            },
        }

    redis = store(REDIS_CLUSTER)
    redis_ports = [(None, redis_port()), (None, redis_port() + 10000)]
    if redis["spec"].get("redisExporter", {}).get("enabled"):
        redis_ports.append(("redis-exporter", redis["spec"]["redisExporter"].get("port", 9121)))
    out = [
        pods(
            f"{redis['metadata']['name']}-{role}",
            # the resource's own labels are copied onto its pods
            {
                **redis["metadata"].get("labels", {}),
                "app": f"{redis['metadata']['name']}-{role}",
                "redis_setup_type": "cluster",
                "role": role,
                "cluster": redis["metadata"]["name"],
            },
            redis_ports,
        )
        for role in ("leader", "follower")
    ]
    pg = store_name(POSTGRES_CLUSTER)
    out.append(
        pods(
            pg,
            {
                "cnpg.io/cluster": pg,
                "cnpg.io/podRole": "instance",
                "cnpg.io/instanceName": f"{pg}-1",
            },
            [("postgresql", 5432), ("metrics", 9187), ("status", 8000)],
        )
    )
    mq = store_name(RABBITMQ_CLUSTER)
    out.append(
        pods(
            f"{mq}-server",
            # the operator's labels (it does not copy app.kubernetes.io/* from the resource)
            {
                "app.kubernetes.io/name": mq,
                "app.kubernetes.io/component": "rabbitmq",
                "app.kubernetes.io/part-of": "rabbitmq",
            },
            [
                ("epmd", 4369),
                ("amqp", 5672),
                ("management", 15672),
                ("prometheus", 15692),
                (None, 25672),
            ],
        )
    )
    return out


# The operators' own pods (they reach the stores' pods from their namespaces).
OPERATORS: dict[str, tuple[dict, dict]] = {
    "redis-operator": ({"kubernetes.io/metadata.name": "ot-operators"}, {"name": "redis-operator"}),
    "cloudnative-pg": (
        {"kubernetes.io/metadata.name": "cnpg-system"},
        {"app.kubernetes.io/name": "cloudnative-pg"},
    ),
    "rabbitmq-cluster-operator": (
        {"kubernetes.io/metadata.name": "rabbitmq-system"},
        {"app.kubernetes.io/name": "rabbitmq-cluster-operator"},
    ),
}


def pinned(image: str) -> bool:
    """``repo:tag`` with a version in the tag (not ``latest``)."""
    repo, _, tag = image.rpartition(":")
    return bool(repo) and "/" not in tag and re.match(r"v?\d+(\.\d+)+", tag) is not None


# --------------------------------------------------------------- processes


def test_every_container_runs_an_existing_module():
    seen = set()
    for w, c in roundhouse_containers():
        cmd = c["command"]
        if cmd[:2] == ["python", "-m"]:
            module = cmd[2]
        elif cmd[0] == "celery":
            module = cmd[cmd.index("-A") + 1]
        else:
            raise AssertionError(f"{w['metadata']['name']}: unexpected command {cmd}")
        assert importlib.util.find_spec(module) is not None, cmd
        seen.add(module)
    assert seen >= {
        *(f"services.{t}.service.server" for t in TITLE_MODULES),
        "services.lobby.server",
        "services.accounts.server",
        "services.bots.dispatcher",
        "services.bots.celery_app",
        "services.archive.server",
        "services.tournaments.service.server",
        "services.web.server",
        "services.clocks.keeper",
    }


def test_bot_worker_consumes_the_queue_the_dispatcher_fills_and_logs_json_only():
    (w, c) = [(w, c) for w, c in roundhouse_containers() if w["metadata"]["name"] == "bot-worker"][
        0
    ]
    cmd = c["command"]
    assert cmd[cmd.index("-Q") + 1] == bot_queue(settings_of(c).key_prefix)
    # no banner on stdout; the level comes from ROUNDHOUSE_LOG_LEVEL (celery_app.py)
    assert cmd.index("--quiet") < cmd.index("worker")
    assert "--loglevel" not in cmd


def test_the_review_worker_consumes_the_review_queue_alone_with_the_store_and_the_broker():
    """Reviews (issue 31) run on a worker of their own: the queue the lobby's RequestReview
    fills (``review_queue``) and only it, one at a time; it writes game_reviews (the
    durable store's URL, which the live bot workers do not get) and announces on Redis;
    the lobby that sends the tasks has the same broker URL."""
    (c,) = containers(named("Deployment", "review-worker"))
    cmd = c["command"]
    settings = settings_of(c)
    assert cmd[:3] == ["celery", "--quiet", "-A"] and "worker" in cmd
    assert cmd[cmd.index("-Q") + 1] == review_queue(settings.key_prefix)
    assert cmd[cmd.index("--concurrency") + 1] == "1"
    env = container_env(c)
    assert env["ROUNDHOUSE_DATABASE_URL"] == secret_value("postgres-app", "uri")
    assert settings.redis_url.startswith("redis://:") and settings.redis_url.endswith("/0")
    for name in ("bot-worker", "bot-dispatcher"):
        for live in containers(named("Deployment", name)):
            assert "ROUNDHOUSE_DATABASE_URL" not in container_env(live), name
            cmd = live["command"]
            assert "-Q" not in cmd or cmd[cmd.index("-Q") + 1] != review_queue(settings.key_prefix)
    (lobby,) = containers(named("Deployment", "lobby"))
    assert settings_of(lobby).celery_broker == settings.celery_broker
    assert is_amqp(settings_of(lobby).celery_broker)


def test_containers_have_resources_and_run_as_non_root():
    for w in workloads():
        for c in containers(w):
            assert c["resources"]["requests"], c["name"]
            assert "memory" in c["resources"]["limits"], c["name"]
    for _, c in roundhouse_containers():
        assert c["securityContext"]["runAsNonRoot"] is True
        assert c["securityContext"]["allowPrivilegeEscalation"] is False
    user = re.findall(r"^USER\s+(\S+)", (ROOT / "Dockerfile").read_text(), flags=re.M)
    assert user and user[-1].isdigit(), "runAsNonRoot needs a numeric USER in the image"


# --------------------------------------------------------------- services and addresses


@pytest.mark.parametrize("service", kind("Service"), ids=lambda s: s["metadata"]["name"])
def test_services_select_pods_with_their_ports(service):
    matches = selected_workloads(service)
    assert matches, f"service {service['metadata']['name']} selects no pods"
    for port in service["spec"]["ports"]:
        for w in matches:
            number = container_port(w, port["targetPort"])
            if service["spec"].get("clusterIP") == "None":
                # headless: clients dial the pod address at the Service's port
                assert port["port"] == number


def test_settings_parse_and_every_process_gets_the_same_addresses():
    settings = [settings_of(c) for _, c in roundhouse_containers()]
    for s in settings[1:]:
        assert (s.rules_addresses, s.lobby_address, s.accounts_address, s.key_prefix) == (
            settings[0].rules_addresses,
            settings[0].lobby_address,
            settings[0].accounts_address,
            settings[0].key_prefix,
        )
    assert set(settings[0].rules_addresses) == set(TITLE_MODULES)


def dns_target(address: str) -> tuple[str, int]:
    """``dns:///host:port`` -> (host, port); fails on anything else."""
    parts = urlsplit(address)
    assert (parts.scheme, parts.netloc) == ("dns", ""), address
    host, port = parts.path.removeprefix("/").rsplit(":", 1)
    return host, int(port)


@pytest.mark.parametrize("title", sorted(TITLE_MODULES))
def test_rules_addresses_are_dns_names_of_headless_services_on_the_servers_port(title):
    (_, c) = roundhouse_containers()[0]
    address = settings_of(c).rules_addresses[title]
    host, port = dns_target(address)
    service = named("Service", host)
    assert service["spec"]["clusterIP"] == "None", "round_robin needs one address per pod"
    port_spec = service_port(service, port)
    (rules,) = selected_workloads(service)
    assert rules["spec"]["template"]["spec"]["containers"][0]["command"][2] == (
        f"services.{title}.service.server"
    )
    # the rules server listens on address.rsplit(":", 1)[1]: the port clients dial
    assert int(address.rsplit(":", 1)[1]) == container_port(rules, port_spec["targetPort"])


@pytest.mark.parametrize("setting", ["lobby_address", "accounts_address", "tournaments_address"])
def test_public_addresses_are_dns_names_of_clusterip_services(setting):
    (_, c) = roundhouse_containers()[0]
    address = getattr(settings_of(c), setting)
    host, port = dns_target(address)
    service = named("Service", host)
    assert service["spec"].get("type", "ClusterIP") == "ClusterIP"
    assert service["spec"].get("clusterIP") != "None"
    (server,) = selected_workloads(service)
    assert server["metadata"]["name"] == setting.removesuffix("_address")
    assert int(address.rsplit(":", 1)[1]) == container_port(
        server, service_port(service, port)["targetPort"]
    )


def test_the_store_users_reach_the_postgres_primary_with_the_operators_secret_and_migrate_first():
    """Every container given ROUNDHOUSE_DATABASE_URL (init containers too) takes it
    from the Secret CloudNativePG makes for the cluster's owner (``<cluster>-app``,
    key ``uri``): the primary's Service ``<cluster>-rw``, the database and owner the
    cluster bootstraps, the generated password; the accounts pods migrate before
    they serve."""
    from sqlalchemy.engine import make_url

    pg = store(POSTGRES_CLUSTER)
    initdb = pg["spec"]["bootstrap"]["initdb"]
    app_secret = f"{pg['metadata']['name']}-app"
    users = []
    for w in workloads():
        for c in pod_spec(w).get("initContainers", []) + containers(w):
            env = container_env(c)
            if "ROUNDHOUSE_DATABASE_URL" not in env:
                continue
            users.append((w["metadata"]["name"], c["name"]))
            (var,) = [v for v in c["env"] if v["name"] == "ROUNDHOUSE_DATABASE_URL"]
            assert var["valueFrom"]["secretKeyRef"] == {"name": app_secret, "key": "uri"}
            with mock.patch.dict(os.environ, env, clear=True):
                url = make_url(database_url(Settings()))
            assert url.drivername == "postgresql+asyncpg"
            assert url.password == secret_value(app_secret, "password")
            assert (url.username, url.database) == (initdb["owner"], initdb["database"])
            assert url.host.split(".")[0] == f"{pg['metadata']['name']}-rw"  # the primary
            assert store_service_port(url.host, url.port) == "postgres"
    assert ("accounts", "migrate") in users and ("accounts", "accounts") in users
    assert ("lobby", "lobby") in users  # tables live in the store
    assert ("tournaments", "tournaments") in users and ("tournaments", "migrate") in users
    assert ("review-worker", "worker") in users  # game_reviews
    assert not {("bot-worker", "worker"), ("bot-dispatcher", "dispatcher")} & set(users)
    (migrate,) = pod_spec(named("Deployment", "accounts"))["initContainers"]
    assert migrate["command"] == ["roundhouse", "db", "upgrade"]


def test_postgres_is_a_cloudnative_pg_cluster_with_a_synchronous_replica():
    """Three instances (a primary, two streaming replicas; the operator fails over),
    a commit waits for one replica, a pinned image, its memory request = limit."""
    spec = store(POSTGRES_CLUSTER)["spec"]
    assert spec["instances"] == 3
    sync = spec["postgresql"]["synchronous"]
    assert sync["method"] in ("any", "first")
    assert 1 <= sync["number"] < spec["instances"]  # a replica may be down without blocking
    assert pinned(spec["imageName"]), spec["imageName"]
    assert spec["resources"]["requests"]["memory"] == spec["resources"]["limits"]["memory"]
    assert memory_bytes(spec["storage"]["size"]) > 0
    assert "postgres-auth" not in {s["metadata"]["name"] for s in kind("Secret")}
    assert not kind("StatefulSet"), "the stores are the operators' (no hand-made StatefulSets)"


def test_the_internal_secret_goes_to_the_services_that_check_it():
    """The accounts, the rules services and the tournament service check it; the
    lobby, the bot workers and the clock keeper send it to the rules services, the
    tournament service to the lobby."""
    given = set()
    for w, c in roundhouse_containers():
        env = container_env(c)
        name = w["metadata"]["name"]
        if name in ("accounts", "lobby", "bot-worker", "tournaments", "clock-keeper") or (
            name.startswith("rules-")
        ):
            given.add(name)
            assert env["ROUNDHOUSE_INTERNAL_SECRET"] == secret_value(
                "internal-secret", "ROUNDHOUSE_INTERNAL_SECRET"
            )
            assert settings_of(c).internal_secret == env["ROUNDHOUSE_INTERNAL_SECRET"]
    assert given == {
        "accounts",
        "lobby",
        "bot-worker",
        "tournaments",
        "clock-keeper",
        "rules-railbarons",
        "rules-transsib",
        "rules-e1894",
    }


# --------------------------------------------------------------- shutdown, probes, metrics


def test_grpc_servers_have_probes_prestop_and_a_grace_period_that_covers_both():
    grpc_workloads = [
        w
        for w, c in roundhouse_containers()
        if any(p["name"] == "grpc" for p in c.get("ports", []))
    ]
    assert {w["metadata"]["name"] for w in grpc_workloads} == {
        "lobby",
        "accounts",
        "archiver",
        "tournaments",
        *(f"rules-{t}" for t in TITLE_MODULES),
    }
    for w in grpc_workloads:
        (c,) = containers(w)
        assert "grpc" in c["readinessProbe"]
        if w["metadata"]["name"] == "archiver":
            # not ready while the database is down, but never restarted for it
            assert c["livenessProbe"]["tcpSocket"]["port"] == "grpc"
        else:
            assert "grpc" in c["livenessProbe"]
        sleep = c["lifecycle"]["preStop"]["exec"]["command"]
        assert sleep[0] == "sleep" and 3 <= int(sleep[1]) <= 15, sleep
        grace = settings_of(c).grace_seconds
        assert pod_spec(w)["terminationGracePeriodSeconds"] > int(sleep[1]) + grace, w["metadata"][
            "name"
        ]


def test_metrics_ports_are_exposed_and_annotated_for_every_process_serving_them():
    """Rules services, the lobby, the dispatcher and the Celery workers serve
    /metrics on ROUNDHOUSE_METRICS_PORT."""
    for w, c in roundhouse_containers():
        port = settings_of(c).metrics_port
        assert container_port(w, "metrics") == port
        annotations = w["spec"]["template"]["metadata"]["annotations"]
        assert annotations["prometheus.io/scrape"] == "true"
        assert annotations["prometheus.io/port"] == str(port)
    for name in ("bot-dispatcher", "clock-keeper"):  # no gRPC port: alive while metrics answer
        (c,) = containers(named("Deployment", name))
        assert c["livenessProbe"]["tcpSocket"]["port"] == "metrics"


def test_autoscaled_deployments_leave_the_replica_count_to_the_autoscaler():
    for hpa in kind("HorizontalPodAutoscaler"):
        target = named("Deployment", hpa["spec"]["scaleTargetRef"]["name"])
        assert "replicas" not in target["spec"], "kubectl apply would reset the HPA's count"


# --------------------------------------------------------------- Redis, RabbitMQ and secrets


def test_every_process_uses_the_redis_cluster_with_the_secret_password():
    """Every process sets ROUNDHOUSE_REDIS_CLUSTER=1 and names one node of the cluster
    (the operator's leader Service, database 0, the only one a cluster has) with the
    password of redis-auth, the Secret the cluster itself is given."""
    data = named("ConfigMap", "roundhouse-settings")["data"]
    assert "ROUNDHOUSE_REDIS_URL" not in data
    assert data["ROUNDHOUSE_REDIS_CLUSTER"] == "1"
    assert store(REDIS_CLUSTER)["spec"]["kubernetesConfig"]["redisSecret"] == {
        "name": "redis-auth",
        "key": "password",
    }
    password = secret_value("redis-auth", "password")
    for w, c in roundhouse_containers():
        names = [v["name"] for v in c["env"]]
        (url_var,) = [v for v in c["env"] if v["name"] == "ROUNDHOUSE_REDIS_URL"]
        assert "$(REDIS_PASSWORD)" in url_var["value"]
        (pw_var,) = [v for v in c["env"] if v["name"] == "REDIS_PASSWORD"]
        assert pw_var["valueFrom"]["secretKeyRef"] == {"name": "redis-auth", "key": "password"}
        # $(VAR) only expands variables defined earlier in the list
        assert names.index("REDIS_PASSWORD") < names.index("ROUNDHOUSE_REDIS_URL")
        settings = settings_of(c)
        assert settings.redis_cluster is True
        parsed = parse_url(settings.redis_url)
        assert parsed["password"] == password, w["metadata"]["name"]
        assert parsed.get("db", 0) == 0
        assert parsed["host"] == f"{store_name(REDIS_CLUSTER)}-leader"
        assert store_service_port(parsed["host"], parsed["port"]) == "redis-client"


def redis_config() -> dict[str, str]:
    """The redis.conf lines the cluster's nodes include (the ConfigMap its leaders and
    followers name, under the file name the operator reads)."""
    spec = store(REDIS_CLUSTER)["spec"]
    names = {
        spec[role]["redisConfig"]["additionalRedisConfig"]
        for role in ("redisLeader", "redisFollower")
    }
    (name,) = names  # leaders and followers alike: a follower may become a master
    text = named("ConfigMap", name)["data"]["redis-additional.conf"]
    return dict(line.split(None, 1) for line in text.splitlines() if line.strip())


def test_redis_requires_the_password_and_never_evicts_within_its_memory_limit():
    spec = store(REDIS_CLUSTER)["spec"]
    config = redis_config()
    assert spec["kubernetesConfig"]["redisSecret"]["name"] == "redis-auth"
    assert config["maxmemory-policy"] == "noeviction"
    assert spec["persistenceEnabled"] is True and config["appendonly"] == "yes"
    assert config["appendfsync"] in ("everysec", "always")
    resources = spec["kubernetesConfig"]["resources"]
    assert resources["requests"]["memory"] == resources["limits"]["memory"]
    for role in ("redisLeader", "redisFollower"):
        assert "resources" not in spec[role], "the shared limit is the one checked"
    limit = memory_bytes(resources["limits"]["memory"])
    assert memory_bytes(config["maxmemory"]) <= 0.75 * limit
    # nodes.conf (node id, the cluster's view) survives a restart
    assert spec["storage"]["nodeConfVolume"] is True


def test_redis_is_a_cluster_of_three_masters_with_a_replica_each_and_the_settings_fit_it():
    """3 masters and 3 followers; the lifecycle shards split evenly over the masters;
    a move waits for at most the replicas a master has (WAIT); pinned images whose
    major version is the clusterVersion the operator configures for."""
    spec = store(REDIS_CLUSTER)["spec"]
    masters = spec["redisLeader"].get("replicas", spec["clusterSize"])
    followers = spec["redisFollower"].get("replicas", spec["clusterSize"])
    assert (spec["clusterSize"], masters, followers) == (3, 3, 3)
    replicas_per_master = followers // masters
    assert replicas_per_master == 1 and followers % masters == 0
    data = named("ConfigMap", "roundhouse-settings")["data"]
    assert int(data["ROUNDHOUSE_LIFECYCLE_SHARDS"]) % masters == 0
    assert 1 <= int(data["ROUNDHOUSE_REDIS_WAIT_REPLICAS"]) <= replicas_per_master
    (_, c) = roundhouse_containers()[0]
    for setting in ("lifecycle_shards", "redis_wait_replicas"):
        assert getattr(settings_of(c), setting) == int(data[f"ROUNDHOUSE_{setting.upper()}"])
    image = spec["kubernetesConfig"]["image"]
    assert pinned(image) and pinned(spec["redisExporter"]["image"])
    major = image.rpartition(":")[2].removeprefix("v").split(".")[0]
    assert spec["clusterVersion"] == f"v{major}"
    for role in ("redisLeader", "redisFollower"):
        assert spec[role]["pdb"]["enabled"] and spec[role]["pdb"]["maxUnavailable"] == 1


def test_the_bots_use_rabbitmq_with_the_operators_generated_user():
    """The dispatcher, the workers and the lobby (which sends the review tasks), and
    nothing else, take ROUNDHOUSE_BROKER_URL
    from the RabbitMQ operator's default-user Secret: an amqp:// URL of the cluster's
    Service, its generated user; the cluster has an odd number (3) of nodes for its
    quorum queues, and a pinned image."""
    mq = store(RABBITMQ_CLUSTER)
    resources = mq["spec"]["resources"]
    assert mq["spec"]["replicas"] == 3
    assert pinned(mq["spec"]["image"])
    assert resources["requests"]["memory"] == resources["limits"]["memory"]
    secret = f"{mq['metadata']['name']}-default-user"
    given = set()
    for w, c in roundhouse_containers():
        env = container_env(c)
        if "ROUNDHOUSE_BROKER_URL" not in env:
            continue
        given.add(w["metadata"]["name"])
        (var,) = [v for v in c["env"] if v["name"] == "ROUNDHOUSE_BROKER_URL"]
        assert var["valueFrom"]["secretKeyRef"] == {"name": secret, "key": "connection_string"}
        settings = settings_of(c)
        settings.check_broker()  # a cluster needs a broker of its own
        broker = settings.celery_broker
        assert is_amqp(broker)
        parts = urlsplit(broker)
        assert (parts.username, parts.password) == (
            secret_value(secret, "username"),
            secret_value(secret, "password"),
        )
        assert parts.hostname and parts.port
        assert parts.hostname.split(".")[0] == mq["metadata"]["name"]
        assert store_service_port(parts.hostname, parts.port) == "amqp"
    assert given == {"bot-dispatcher", "bot-worker", "review-worker", "lobby"}


def test_every_secret_reference_names_a_secret_someone_makes():
    """Each Secret a container, the Redis Cluster or the KEDA Component reads is in
    secrets.yaml or is one an operator makes (with that key), and secrets.yaml makes
    none of the operators' (it would fight the operator over it)."""
    refs = [
        (v["valueFrom"]["secretKeyRef"]["name"], v["valueFrom"]["secretKeyRef"]["key"])
        for w in workloads()
        for c in pod_spec(w).get("initContainers", []) + containers(w)
        for v in c.get("env", [])
        if "secretKeyRef" in v.get("valueFrom", {})
    ]
    redis_secret = store(REDIS_CLUSTER)["spec"]["kubernetesConfig"]["redisSecret"]
    refs.append((redis_secret["name"], redis_secret["key"]))
    refs += [
        (ref["name"], ref["key"])
        for auth in kind("TriggerAuthentication", KEDA_DOCS)
        for ref in auth["spec"]["secretTargetRef"]
    ]
    assert {name for name, _ in refs} >= {"postgres-app", "rabbitmq-default-user", "redis-auth"}
    for name, key in refs:
        assert secret_value(name, key), (name, key)
    ours = {s["metadata"]["name"] for s in kind("Secret")}
    assert not ours & set(generated_secrets())


def test_secrets_are_marked_placeholders_and_the_password_is_url_safe():
    for secret in kind("Secret"):
        for key, value in secret["stringData"].items():
            assert "CHANGE-ME" in value, f"{secret['metadata']['name']}/{key}"
    password = secret_value("redis-auth", "password")
    assert quote(password, safe="") == password


def test_only_the_bot_workers_get_the_bot_secret():
    assert "bot_secret" in Settings.model_fields
    for w, c in roundhouse_containers():
        env = container_env(c)
        if w["metadata"]["name"] == "bot-worker":
            assert env["ROUNDHOUSE_BOT_SECRET"] == secret_value(
                "bot-secret", "ROUNDHOUSE_BOT_SECRET"
            )
            assert settings_of(c).bot_secret == env["ROUNDHOUSE_BOT_SECRET"]
        else:
            assert "ROUNDHOUSE_BOT_SECRET" not in env


# --------------------------------------------------------------- NetworkPolicies

NS_LABELS = {"kubernetes.io/metadata.name": NAMESPACE}


def selector_matches(selector: dict, labels: dict[str, str]) -> bool:
    """A Kubernetes LabelSelector (``{}`` selects everything)."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for e in selector.get("matchExpressions", []):
        present, value = e["key"] in labels, labels.get(e["key"])
        ok = {
            "In": present and value in e.get("values", []),
            "NotIn": not present or value not in e.get("values", []),
            "Exists": present,
            "DoesNotExist": not present,
        }[e["operator"]]
        if not ok:
            return False
    return True


# A source of traffic: (namespace labels, pod labels); (None, None) is an
# address outside the cluster.
Source = tuple[dict | None, dict | None]


def peer_matches(peer: dict, source: Source) -> bool:
    ns_labels, labels = source
    if "ipBlock" in peer:
        return labels is None
    if labels is None:
        return False
    ns_ok = (
        ns_labels == NS_LABELS
        if "namespaceSelector" not in peer
        else selector_matches(peer["namespaceSelector"], ns_labels)
    )
    return ns_ok and selector_matches(peer.get("podSelector", {}), labels)


def ingress_allowed(
    policies: list[dict], dst: dict, port_name: str | None, port: int, source: Source
) -> bool:
    """Whether ``source`` may open a TCP connection to ``port`` of ``dst``'s pods."""
    selecting = [
        p
        for p in policies
        if selector_matches(p["spec"]["podSelector"], pod_labels(dst))
        and "Ingress" in p["spec"].get("policyTypes", ["Ingress"])
    ]
    if not selecting:
        return True  # not isolated
    for p in selecting:
        for rule in p["spec"].get("ingress", []):
            peers = rule.get("from") or []
            ports = rule.get("ports") or []
            if (not peers or any(peer_matches(x, source) for x in peers)) and (
                not ports
                or any(
                    x.get("protocol", "TCP") == "TCP" and x.get("port") in (None, port_name, port)
                    for x in ports
                )
            ):
                return True
    return False


def pods_here() -> list[dict]:
    """Every pod of the namespace: the Roundhouse workloads and the stores' pods."""
    return workloads() + operator_pods()


def sources() -> dict[str, Source]:
    """Every pod of the namespace, plus strangers: a pod elsewhere wearing our
    labels, an unlabelled pod in our namespace, Prometheus, KEDA, the operators,
    the Internet."""
    out: dict[str, Source] = {
        w["metadata"]["name"]: (NS_LABELS, pod_labels(w)) for w in pods_here()
    }
    out["impostor in another namespace"] = (
        {"kubernetes.io/metadata.name": "elsewhere"},
        {
            "app.kubernetes.io/name": "lobby",
            "app.kubernetes.io/component": "rules",
            "cnpg.io/cluster": store_name(POSTGRES_CLUSTER),
            "app": f"{store_name(REDIS_CLUSTER)}-leader",
            "redis_setup_type": "cluster",
        },
    )
    out["unlabelled pod here"] = (NS_LABELS, {"run": "debug"})
    out["monitoring"] = ({"kubernetes.io/metadata.name": "monitoring"}, {"app": "prometheus"})
    out["keda"] = ({"kubernetes.io/metadata.name": "keda"}, {"app": "keda-operator"})
    out |= OPERATORS
    out["internet"] = (None, None)
    return out


def expected_sources(workload: str, port: dict) -> set[str]:
    """Who may reach ``port`` (a container port: by name, else by number) of ``workload``."""
    everyone = set(sources())
    processes = {w["metadata"]["name"] for w in workloads()}
    redis, pg, mq = (
        {f"{store_name(REDIS_CLUSTER)}-leader", f"{store_name(REDIS_CLUSTER)}-follower"},
        store_name(POSTGRES_CLUSTER),
        f"{store_name(RABBITMQ_CLUSTER)}-server",
    )
    key = (workload, port["name"] or port["containerPort"])
    if key in (("lobby", "grpc"), ("accounts", "grpc"), ("archiver", "grpc"), ("gateway", "http")):
        return everyone
    if key == ("tournaments", "grpc"):
        return {"gateway"}
    if workload.startswith("rules-") and key[1] == "grpc":
        return {"lobby", "bot-worker", "clock-keeper"}
    if workload in processes and key[1] == "metrics":
        return {"monitoring"}
    if workload in redis:
        return {
            redis_port(): processes | redis | {"redis-operator"},  # replication: node to node
            redis_port() + 10000: redis,  # the cluster bus
            "redis-exporter": {"monitoring"},
        }[key[1]]
    if workload == pg:
        return {
            # the rules services read finished games from the archive; the replicas
            # stream from the primary
            "postgresql": {
                "accounts",
                "lobby",
                "archiver",
                "tournaments",
                "review-worker",
                *(f"rules-{t}" for t in TITLE_MODULES),
                pg,
                "cloudnative-pg",
            },
            "status": {pg, "cloudnative-pg"},
            "metrics": {"monitoring"},
        }[key[1]]
    if workload == mq:
        return {
            "amqp": {"bot-dispatcher", "bot-worker", "review-worker", "lobby"},
            "epmd": {mq},
            25672: {mq},  # Erlang distribution
            "management": set(),  # port-forward only
            "prometheus": {"monitoring"},
        }[key[1]]
    raise AssertionError(f"no expectation for {workload} port {key[1]}: add one to the test")


@pytest.mark.parametrize("workload", pods_here(), ids=lambda w: w["metadata"]["name"])
def test_network_policies_allow_exactly_the_intended_flows(workload):
    policies = kind("NetworkPolicy")
    name = workload["metadata"]["name"]
    for c in containers(workload):
        for p in c.get("ports", []):
            allowed = {
                s
                for s, source in sources().items()
                if ingress_allowed(policies, workload, p["name"], p["containerPort"], source)
            }
            assert allowed == expected_sources(name, p), (name, p)
    # every workload is isolated: a port nobody declared is closed to everyone
    for s, source in sources().items():
        assert not ingress_allowed(policies, workload, None, 12345, source), (name, s)


def test_any_other_pod_in_the_namespace_is_isolated_by_default():
    """A default-deny policy covers pods nobody wrote a policy for (a debug
    pod, a future workload): nothing reaches them until a policy says so."""
    stranger = {"spec": {"template": {"metadata": {"labels": {"run": "debug"}}}}}
    for s, source in sources().items():
        assert not ingress_allowed(kind("NetworkPolicy"), stranger, "http", 8080, source), s


def test_only_the_lobby_and_accounts_are_reachable_from_outside_except_metrics():
    """From other namespaces or the Internet only the gRPC ports of the lobby,
    the accounts and the archive (ListGames, read-only) and the gateway's HTTP
    port answer (Prometheus' metrics scrape and the operators' reach into their
    stores' pods, checked flow by flow above, are the other exceptions)."""
    outsiders = {
        s: src
        for s, src in sources().items()
        if src[0] != NS_LABELS and s != "monitoring" and s not in OPERATORS
    }
    for w in pods_here():
        for c in containers(w):
            for p in c.get("ports", []):
                reachable = any(
                    ingress_allowed(kind("NetworkPolicy"), w, p["name"], p["containerPort"], src)
                    for src in outsiders.values()
                )
                public = (w["metadata"]["name"], p["name"]) in (
                    ("lobby", "grpc"),
                    ("accounts", "grpc"),
                    ("archiver", "grpc"),
                    ("gateway", "http"),
                )
                assert reachable == public, (w["metadata"]["name"], p)


# --------------------------------------------------------------- KEDA (optional Component)


def test_keda_scales_one_replica_per_concurrency_queued_turns():
    """The queueing model of docs/bots.md: the target queue length per replica is the
    worker's ``--concurrency``, so HPA settles at K / (2 c) replicas for K waiting
    tables; the length is the queue's ready messages (AMQP: not the turns being
    played), the model's queue."""
    (scaled,) = kind("ScaledObject", KEDA_DOCS)
    (trigger,) = scaled["spec"]["triggers"]
    worker = named("Deployment", scaled["spec"]["scaleTargetRef"]["name"])
    (container,) = worker["spec"]["template"]["spec"]["containers"]
    command = container["command"]
    concurrency = int(command[command.index("--concurrency") + 1])
    assert trigger["metadata"]["mode"] == "QueueLength"
    assert trigger["metadata"]["protocol"] == "amqp"
    assert int(trigger["metadata"]["value"]) == concurrency
    assert scaled["spec"]["minReplicaCount"] >= 1


def test_keda_component_matches_the_queue_rabbitmq_and_secret():
    component = yaml.safe_load((KEDA / "kustomization.yaml").read_text())
    assert component["kind"] == "Component"
    (scaled,) = kind("ScaledObject", KEDA_DOCS)
    (auth,) = kind("TriggerAuthentication", KEDA_DOCS)
    worker = named("Deployment", scaled["spec"]["scaleTargetRef"]["name"])
    (trigger,) = scaled["spec"]["triggers"]
    (c,) = containers(worker)
    settings = settings_of(c)
    assert trigger["type"] == "rabbitmq"
    assert trigger["metadata"]["queueName"] == bot_queue(settings.key_prefix)
    assert trigger["authenticationRef"]["name"] == auth["metadata"]["name"]
    (ref,) = auth["spec"]["secretTargetRef"]
    assert ref["parameter"] == "host"
    # the URL the workers consume from, vhost included
    assert secret_value(ref["name"], ref["key"]) == settings.celery_broker
    assert urlsplit(settings.celery_broker).path in ("", "/")
    assert trigger["metadata"]["vhostName"] == "/"
    # the Component opens exactly one more flow: KEDA's operator (its own
    # namespace) to RabbitMQ's AMQP port, to read the queue length
    base = kind("NetworkPolicy")
    with_keda = base + kind("NetworkPolicy", KEDA_DOCS)
    opened = {
        (w["metadata"]["name"], p["name"], s)
        for w in pods_here()
        for c in containers(w)
        for p in c.get("ports", [])
        for s, src in sources().items()
        if ingress_allowed(with_keda, w, p["name"], p["containerPort"], src)
        and not ingress_allowed(base, w, p["name"], p["containerPort"], src)
    }
    assert opened == {(f"{store_name(RABBITMQ_CLUSTER)}-server", "amqp", "keda")}


# --------------------------------------------------------------- kubectl kustomize


def kustomize(directory: Path) -> list[dict]:
    out = subprocess.run(
        [KUBECTL, "kustomize", str(directory)], capture_output=True, text=True, check=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def key(doc: dict) -> tuple[str, str]:
    return doc["kind"], doc["metadata"]["name"]


def strip_namespace(doc: dict) -> dict:
    meta = {k: v for k, v in doc["metadata"].items() if k != "namespace"}
    return {**doc, "metadata": meta}


if KUBECTL:

    def test_kubectl_kustomize_renders_what_these_tests_read(tmp_path):
        """Renders deploy/k8s with kubectl: the same objects the tests above
        read, each in the roundhouse namespace; and an overlay adding the KEDA
        Component renders, with the worker's replica count left to KEDA."""
        rendered = kustomize(K8S)
        assert sorted(map(key, rendered)) == sorted(map(key, DOCS))
        by_key = {key(d): d for d in DOCS}
        for doc in rendered:
            if doc["kind"] != "Namespace":
                assert doc["metadata"]["namespace"] == NAMESPACE, key(doc)
            assert strip_namespace(doc) == strip_namespace(by_key[key(doc)]), key(doc)

        overlay = tmp_path / "overlay"
        overlay.mkdir()
        base = os.path.relpath(K8S, overlay)  # kustomize refuses absolute paths
        (overlay / "kustomization.yaml").write_text(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            f"resources: [{base}]\ncomponents: [{base}/keda]\n"
        )
        with_keda = {key(d): d for d in kustomize(overlay)}
        assert set(with_keda) == set(by_key) | set(map(key, KEDA_DOCS))
        assert "replicas" not in with_keda[("Deployment", "bot-worker")]["spec"]
        assert with_keda[("ScaledObject", "bot-worker")]["metadata"]["namespace"] == NAMESPACE

else:

    def test_kustomize_render_not_checked_kubectl_missing_pure_yaml_checks_only():
        """kubectl is NOT on PATH, so `kubectl kustomize` was not run: only the
        pure-YAML checks above apply. This checks what can be checked without
        it: the KEDA Component's patch targets an existing Deployment that has a
        replica count to remove."""
        component = yaml.safe_load((KEDA / "kustomization.yaml").read_text())
        (patch,) = component["patches"]
        target = named(patch["target"]["kind"], patch["target"]["name"])
        assert "replicas" in target["spec"]
        assert "remove" in patch["patch"] and "/spec/replicas" in patch["patch"]


def test_the_archiver_and_the_rules_services_reach_the_store_and_the_archiver_migrates():
    """The archiver writes the archive; the rules services answer finished games
    from it: both get ROUNDHOUSE_DATABASE_URL (checked above with every store
    user), never from the ConfigMap; the archiver migrates before it serves."""
    assert "ROUNDHOUSE_DATABASE_URL" not in named("ConfigMap", "roundhouse-settings")["data"]
    readers = {"archiver", *(f"rules-{t}" for t in TITLE_MODULES)}
    for w, c in roundhouse_containers():
        if w["metadata"]["name"] in readers:
            # CloudNativePG's postgresql:// URI, read as asyncpg
            assert database_url(settings_of(c)).startswith("postgresql+asyncpg://")
    archiver_pod = named("Deployment", "archiver")
    (migrate,) = pod_spec(archiver_pod)["initContainers"]
    assert migrate["command"] == ["roundhouse", "db", "upgrade"]
    (archiver,) = containers(archiver_pod)
    settings = settings_of(archiver)
    assert settings.archive_address.endswith(":50065")
    assert container_port(archiver_pod, "grpc") == 50065
    assert settings.archived_game_ttl_s > 0


def test_the_gateway_listens_where_its_service_points_and_probes_a_route_it_has():
    """The gateway binds the port its Service targets, its probes ask a path the app
    serves, and it stops within its grace period (preStop + uvicorn's graceful stop)."""
    from services.web.app import create_app

    w = named("Deployment", "gateway")
    (c,) = containers(w)
    settings = settings_of(c)
    host, port = settings.gateway_address.rsplit(":", 1)
    assert host == "0.0.0.0" and int(port) == container_port(w, "http")
    service = named("Service", "gateway")
    assert selected_workloads(service) == [w]
    assert service_port(service, 8080)["targetPort"] == "http"
    paths = {getattr(r, "path", None) for r in create_app(settings).routes}
    for probe in ("readinessProbe", "livenessProbe"):
        assert c[probe]["httpGet"]["port"] == "http"
        assert c[probe]["httpGet"]["path"] in paths
    sleep = int(c["lifecycle"]["preStop"]["exec"]["command"][1])
    assert pod_spec(w)["terminationGracePeriodSeconds"] > sleep + settings.grace_seconds
    # it reaches the services behind the API at the addresses every process gets
    for setting in ("lobby_address", "accounts_address", "tournaments_address"):
        target, number = dns_target(getattr(settings, setting))
        assert service_port(named("Service", target), number)


def test_the_clock_keeper_runs_once_and_reaches_the_rules_services():
    """One keeper (its deadlines are in Redis; a rollout replaces it whole), with the
    rules addresses and the internal credentials its Timeout calls need."""
    w = named("Deployment", "clock-keeper")
    assert w["spec"]["replicas"] == 1 and w["spec"]["strategy"]["type"] == "Recreate"
    (c,) = containers(w)
    settings = settings_of(c)
    assert set(settings.rules_addresses) == set(TITLE_MODULES)
    assert settings.internal_secret == secret_value("internal-secret", "ROUNDHOUSE_INTERNAL_SECRET")
    for title, address in settings.rules_addresses.items():
        host, _ = dns_target(address)
        (rules,) = selected_workloads(named("Service", host))
        assert ingress_allowed(
            kind("NetworkPolicy"),
            rules,
            "grpc",
            container_port(rules, "grpc"),
            (NS_LABELS, pod_labels(w)),
        ), title
