"""ImageLocality (framework/plugins/imagelocality/image_locality.go).

From v1.36 (ungated; CHANGES "ImageLocalityImageVolumes") the images of the pod's image volumes
(``volumes[].image.reference``) count in the sum too; the threshold still counts containers."""

from __future__ import annotations

from harness.framework import signers
from harness.framework import MAX_NODE_SCORE, Plugin, hookimpl

from harness.framework.node_table import NodeRows, numpy

from . import names
from .helper import features_of

MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """The CRI name: ":latest" appended when the name has no tag."""
    if name.rfind(":") <= name.rfind("/"):
        name = name + ":latest"
    return name


class _PodImages:
    """What Score needs of the pod, derived once per pod (cached with pod.memo): the normalized
    image names of the init containers then the containers, the container count, and the score
    of a node that has none of the images (calculatePriority of a zero sum). With
    `image_volumes` (v1.36), the image volumes' references follow the containers' images."""

    __slots__ = ("images", "num_containers", "score_without_images")

    def __init__(self, pod, image_volumes: bool = False):
        containers = list(pod.init_containers) + list(pod.containers)
        self.images = [normalized_image_name(str(c.get("image") or "")) for c in containers]
        if image_volumes:
            for v in pod.spec.get("volumes") or ():
                image = (v or {}).get("image")
                if image is not None:
                    self.images.append(normalized_image_name(str(image.get("reference") or "")))
        self.num_containers = len(containers)
        self.score_without_images = calculate_priority(0, self.num_containers)


def _pod_images(pod, image_volumes: bool = False) -> _PodImages:
    if image_volumes:
        return pod.memo("image_locality+volumes", lambda p: _PodImages(p, True))
    return pod.memo("image_locality", _PodImages)


def scaled_image_score(state, total_num_nodes: int) -> int:
    """The image size scaled by the fraction of nodes that have it (float64, truncated)."""
    spread = float(state.num_nodes) / float(total_num_nodes)
    return int(float(state.size) * spread)


def sum_image_scores(node_info, pod, total_num_nodes: int, image_volumes: bool = False) -> int:
    """sumImageScores: the scaled scores of the pod's images that are on the node."""
    total = 0
    states = node_info.image_states
    for image in _pod_images(pod, image_volumes).images:
        st = states.get(image)
        if st is not None:
            total += scaled_image_score(st, total_num_nodes)
    return total


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    # Go int64 division truncates toward zero; the numerator is >= 0 except with no containers.
    num = MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD)
    den = max_threshold - MIN_THRESHOLD
    q = abs(num) // abs(den)
    return q if (num >= 0) == (den > 0) else -q


class ImageLocality(Plugin):
    name = names.ImageLocality

    def __init__(self, args=None, handle=None):
        super().__init__(args, handle)
        self.image_volumes = features_of(handle).has("ImageLocalityImageVolumes")

    @hookimpl
    def sign_pod(self, pod):
        """SignPod: the distinct normalized image names of the containers and init containers,
        sorted (image volumes are not signed)."""
        names = sorted({normalized_image_name(str((c or {}).get("image") or ""))
                        for c in pod.containers + pod.init_containers})
        return [(signers.IMAGE_NAMES_SIGNER_NAME, names)], None

    @hookimpl
    def score(self, state, pod, node_info):
        """Score: calculatePriority(sumImageScores(...), number of containers)."""
        iv = self.image_volumes
        pi = _pod_images(pod, iv)
        if not node_info.image_states:
            # A node without images sums to 0 whatever the pod's images.
            return pi.score_without_images, None
        total_num_nodes = len(self.handle.snapshot.list())
        s = sum_image_scores(node_info, pod, total_num_nodes, iv)
        return calculate_priority(s, pi.num_containers), None

    def score_nodes(self, state, pod, nodes):
        """score on each node (the batch form the framework calls)."""
        iv = self.image_volumes
        if nodes.__class__ is NodeRows and not nodes.table.flag_counts["has_images"]:
            # no node has images: every node scores as one without any (the pod's image names
            # are not needed)
            base = calculate_priority(0, len(pod.init_containers) + len(pod.containers))
            return numpy().full(len(nodes), base, dtype=numpy().int64)
        pi = _pod_images(pod, iv)
        base = pi.score_without_images
        total_num_nodes = len(self.handle.snapshot.list())
        if nodes.__class__ is NodeRows:
            np = numpy()
            out = np.full(len(nodes), base, dtype=np.int64)
            for k in nodes.flagged("has_images"):
                out[k] = calculate_priority(sum_image_scores(nodes[k], pod, total_num_nodes, iv), pi.num_containers)
            return out
        return [base if not ni.image_states
                else calculate_priority(sum_image_scores(ni, pod, total_num_nodes, iv), pi.num_containers)
                for ni in nodes]


PLUGINS = [ImageLocality]
