"""deploy/k8s/: valid Kubernetes objects (kubernetes-validate's own schemas, offline), and pods
that give the runner what its walls need.

The walls themselves are checked in the image by scripts/container-check.sh and, under these
pods' settings (a read-only root, /tmp on its own, no privileges, the seccomp profiles), by
scripts/compose-check.sh; here, that the manifests ask for those settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
MANIFESTS = sorted(K8S.rglob("*.yaml"))
# The oldest Kubernetes still maintained when this was written, and the newest the package knows:
# the manifests use nothing newer or older than both.
VERSIONS = ("1.31.0", kubernetes_validate.latest_version())
LANDLOCK = {"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self"}


def _objects(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _all(kind: str) -> list[dict[str, Any]]:
    return [obj for path in MANIFESTS for obj in _objects(path) if obj["kind"] == kind]


def _lab(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lab's own objects, not its room store's."""
    return [o for o in objects
            if o["metadata"]["labels"]["app.kubernetes.io/name"] == "gradient-lab"]


DEPLOYMENTS = _lab(_all("Deployment"))
CONTAINERS = [(d, c) for d in DEPLOYMENTS for c in d["spec"]["template"]["spec"]["containers"]]


def _ids(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[str]:
    return [f"{d['metadata'].get('labels', {}).get('app.kubernetes.io/component', 'cpu')}:"
            f"{c['name']}" for d, c in pairs]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=[str(p.relative_to(K8S)) for p in MANIFESTS])
def test_every_manifest_validates_against_the_kubernetes_schemas(path: Path,
                                                                 version: str) -> None:
    objects = _objects(path)
    assert objects, f"{path} holds no object"
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_folder_has_each_object_a_school_needs() -> None:
    top = {obj["kind"] for path in K8S.glob("*.yaml") for obj in _objects(path)}
    assert top == {"ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler",
                   "PodDisruptionBudget", "NetworkPolicy"}
    hpa, = _all("HorizontalPodAutoscaler")
    assert hpa["spec"]["scaleTargetRef"]["name"] == "gradient-lab"
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]


def test_there_is_a_gpu_variant_that_asks_for_a_gpu_on_a_gpu_node() -> None:
    gpu = [d for d in DEPLOYMENTS if d["metadata"]["labels"].get("app.kubernetes.io/component")
           == "gpu"]
    assert len(gpu) == 1
    spec = gpu[0]["spec"]["template"]["spec"]
    assert spec["nodeSelector"]
    container, = spec["containers"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert {"name": "APP_DEVICE", "value": "cuda"} in container["env"]


def test_the_service_the_budget_and_the_deployments_select_the_same_pods() -> None:
    service, = _lab(_all("Service"))
    budget, = _all("PodDisruptionBudget")
    assert "sessionAffinity" not in service["spec"]  # any pod answers any request
    for deployment in DEPLOYMENTS:
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items()
        assert budget["spec"]["selector"]["matchLabels"].items() <= labels.items()


@pytest.mark.parametrize(("deployment", "container"), CONTAINERS, ids=_ids(CONTAINERS))
def test_pods_run_as_the_walls_need(deployment: dict[str, Any],
                                    container: dict[str, Any]) -> None:
    pod = deployment["spec"]["template"]["spec"]
    context = {**pod["securityContext"], **container["securityContext"]}
    assert context["runAsNonRoot"] is True and context["runAsUser"] == 10001  # the image's lab
    assert context["allowPrivilegeEscalation"] is False
    assert context["privileged"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    # Never Unconfined: the runtime's filter is a wall too. RuntimeDefault, or the shipped one.
    profile = context["seccompProfile"]
    assert profile["type"] in ("RuntimeDefault", "Localhost")
    if profile["type"] == "Localhost":
        assert (K8S / "seccomp" / Path(profile["localhostProfile"]).name).exists()
    assert pod["automountServiceAccountToken"] is False


@pytest.mark.parametrize(("deployment", "container"), CONTAINERS, ids=_ids(CONTAINERS))
def test_a_read_only_root_leaves_tmp_writable_for_the_children(
        deployment: dict[str, Any], container: dict[str, Any]) -> None:
    # The pool makes each child's working folder with tempfile.mkdtemp, under /tmp.
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert "/tmp" in mounts and "emptyDir" in volumes[mounts["/tmp"]]


@pytest.mark.parametrize(("deployment", "container"), CONTAINERS, ids=_ids(CONTAINERS))
def test_probes_restart_a_dead_server_and_hold_back_one_without_its_walls(
        deployment: dict[str, Any], container: dict[str, Any]) -> None:
    def path(probe: str) -> str:
        check = container[probe]["httpGet"]
        assert check["port"] in ("http", 8000)
        return str(check["path"])

    # /healthz stays 200 with a wall missing (no restart can add one); /readyz is 503 then.
    assert path("livenessProbe") == "/healthz"
    assert path("startupProbe") == "/healthz"
    assert path("readinessProbe") == "/readyz"
    assert {p["containerPort"] for p in container["ports"]} == {8000}


@pytest.mark.parametrize(("deployment", "container"), CONTAINERS, ids=_ids(CONTAINERS))
def test_requests_and_limits_are_set_and_runner_jobs_match_the_cpu_limit(
        deployment: dict[str, Any], container: dict[str, Any]) -> None:
    resources = container["resources"]
    assert {"cpu", "memory"} <= resources["requests"].keys()
    assert {"cpu", "memory"} <= resources["limits"].keys()
    config, = _all("ConfigMap")
    # A container sees every CPU of its node: APP_RUNNER_JOBS says how many it may use.
    assert config["data"]["APP_RUNNER_JOBS"] == str(resources["limits"]["cpu"])


def test_the_shipped_seccomp_profile_allows_the_walls_and_denies_by_default() -> None:
    profile = json.loads((K8S / "seccomp" / "gradient-lab.json").read_text())
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    allowed = {name for rule in profile["syscalls"] if rule["action"] == "SCMP_ACT_ALLOW"
               and not rule.get("args") for name in rule["names"]}
    assert LANDLOCK | {"seccomp", "prctl", "pidfd_open"} <= allowed
    # What a container without capabilities never needs stays shut.
    assert not {"ptrace", "mount", "unshare", "setns", "keyctl", "bpf"} & allowed
    clone3, = [rule for rule in profile["syscalls"] if rule["names"] == ["clone3"]]
    assert clone3["errnoRet"] == 38  # ENOSYS, so glibc falls back to clone


def test_every_pod_shares_one_room_store_that_only_the_labs_pods_reach() -> None:
    # Each pod's /tmp is its own: with the SQLite default, a student's pod would not know the
    # teacher's room.
    config, = _all("ConfigMap")
    redis, = [d for d in _all("Deployment") if d not in DEPLOYMENTS]
    service, = [s for s in _all("Service") if s not in _lab(_all("Service"))]
    port = service["spec"]["ports"][0]["port"]
    assert config["data"]["APP_ROOM_STORE"] == f"redis://{service['metadata']['name']}:{port}/0"
    assert service["spec"]["selector"].items() <= \
        redis["spec"]["template"]["metadata"]["labels"].items()
    pod = redis["spec"]["template"]["spec"]
    container, = pod["containers"]
    context = {**pod["securityContext"], **container["securityContext"]}
    assert context["runAsNonRoot"] is True and context["capabilities"] == {"drop": ["ALL"]}
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert container["args"][:2] == ["--save", ""]  # rooms are not kept on disk
    policy, = _all("NetworkPolicy")
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= \
        redis["spec"]["template"]["metadata"]["labels"].items()
    sources = [peer["podSelector"]["matchLabels"] for rule in policy["spec"]["ingress"]
               for peer in rule["from"]]
    assert sources == [{"app.kubernetes.io/name": "gradient-lab"}]
