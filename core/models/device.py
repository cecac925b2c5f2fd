"""Which device encodes: the user's choice, resolved against what this machine has.

``auto`` takes CUDA when torch sees a GPU, then Apple's MPS, then the CPU; an
explicit ``cuda`` or ``mps`` that torch cannot see is an error with one clear
line, never a silent fallback.  Resolution is a pure function of the request
and of what is visible (:func:`resolve_device`), so it is tested with the GPU's
presence faked; the one impure probe, :func:`visible_devices`, asks torch and
onnxruntime once per process.

ONNX models run on onnxruntime's ``CUDAExecutionProvider`` when the resolved
device is CUDA and that provider is installed (the ``onnxruntime-gpu``
package), otherwise on the CPU provider; :func:`onnx_providers` says which.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from dataclasses import dataclass

from core import constants
from core.constants import BATCH_SIZE_BY_DEVICE, DEVICE_AUTO, DEVICE_CHOICES, DEVICE_CPU, DEVICE_CUDA, DEVICE_MPS

CPU_PROVIDER = "CPUExecutionProvider"
CUDA_PROVIDER = "CUDAExecutionProvider"

NO_CUDA = "no CUDA device is visible to torch"
NO_MPS = "no MPS device is visible to torch (it needs Apple silicon and a torch built with MPS)"


class DeviceUnavailable(ValueError):
    """The device asked for is not visible here; the message is one line."""


@dataclass(frozen=True)
class VisibleDevices:
    """What this process can run on.

    Attributes:
        cuda: torch sees at least one CUDA GPU.
        mps: torch sees Apple's Metal (MPS) device.
        onnx_providers: onnxruntime's installed execution providers, in its order.
    """

    cuda: bool = False
    mps: bool = False
    onnx_providers: tuple[str, ...] = (CPU_PROVIDER,)


def resolve_device(requested: str, visible: VisibleDevices) -> str:
    """The torch device a request means on a machine with ``visible`` devices.

    Args:
        requested: ``auto``, ``cpu``, ``cuda`` or ``mps`` (case and spaces ignored).
        visible: what torch and onnxruntime see.

    Returns:
        ``cpu``, ``cuda`` or ``mps``.

    Raises:
        DeviceUnavailable: ``cuda`` or ``mps`` asked for but not visible.
        ValueError: any other name.
    """
    name = (requested or "").strip().lower()
    if name not in DEVICE_CHOICES:
        raise ValueError(f"device must be one of {', '.join(DEVICE_CHOICES)}; got {requested!r}")
    if name == DEVICE_AUTO:
        return DEVICE_CUDA if visible.cuda else DEVICE_MPS if visible.mps else DEVICE_CPU
    if name == DEVICE_CUDA and not visible.cuda:
        raise DeviceUnavailable(NO_CUDA)
    if name == DEVICE_MPS and not visible.mps:
        raise DeviceUnavailable(NO_MPS)
    return name


def onnx_providers(device: str, visible: VisibleDevices) -> list[str]:
    """onnxruntime providers for a resolved device: CUDA first when it can run there, always the CPU.

    Args:
        device: a resolved device (``cpu``, ``cuda`` or ``mps``).
        visible: what onnxruntime has installed.

    Raises:
        ValueError: for a device that is not resolved (``auto`` or unknown).
    """
    if device not in BATCH_SIZE_BY_DEVICE:
        raise ValueError(f"onnx_providers needs a resolved device ({', '.join(BATCH_SIZE_BY_DEVICE)}); got {device!r}")
    # MPS has no onnxruntime provider in the standard wheels: ONNX models stay on the CPU there.
    if device == DEVICE_CUDA and CUDA_PROVIDER in visible.onnx_providers:
        return [CUDA_PROVIDER, CPU_PROVIDER]
    return [CPU_PROVIDER]


def provider_device(providers: list[str] | tuple[str, ...]) -> str:
    """The device an onnxruntime session runs on, from its providers in priority order."""
    return DEVICE_CUDA if providers and providers[0] == CUDA_PROVIDER else DEVICE_CPU


def batch_size_for(device: str, override: int | None = None) -> int:
    """Texts per forward pass: ``override`` when given, else the device's default.

    Args:
        device: a resolved device.
        override: the user's ``--batch-size``, or None.

    Raises:
        ValueError: override below 1, or a device that is not resolved.
    """
    if override is not None:
        if isinstance(override, bool) or not isinstance(override, int) or override < 1:
            raise ValueError(f"batch size must be a whole number of at least 1; got {override!r}")
        return override
    if device not in BATCH_SIZE_BY_DEVICE:
        raise ValueError(f"batch_size_for needs a resolved device ({', '.join(BATCH_SIZE_BY_DEVICE)}); got {device!r}")
    return BATCH_SIZE_BY_DEVICE[device]


@functools.cache
def visible_devices() -> VisibleDevices:
    """Ask torch and onnxruntime, once per process, what they can run on.

    torch is asked only where it may see a GPU (:func:`may_have_gpu`): its import (seconds) is not paid by a
    model that runs on ONNX, and a page never waits on the import lock while a background thread imports torch.
    """
    try:
        import onnxruntime as ort

        providers = tuple(ort.get_available_providers())
    except ImportError:
        providers = (CPU_PROVIDER,)
    if not may_have_gpu():
        return VisibleDevices(onnx_providers=providers)
    import torch

    mps = getattr(torch.backends, "mps", None)
    return VisibleDevices(cuda=bool(torch.cuda.is_available()), mps=bool(mps is not None and mps.is_available()), onnx_providers=providers)


# A GPU torch can use shows one of these: NVIDIA's driver, WSL2's GPU bridge, AMD ROCm's kernel driver.
GPU_DEVICE_FILES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg", "/dev/kfd")


def may_have_gpu() -> bool:
    """Whether torch might see a CUDA or MPS device here, told without importing torch.

    False only when that is certain: not Apple silicon, and no GPU device file
    (:data:`GPU_DEVICE_FILES`) or ``CUDA_VISIBLE_DEVICES`` hides them all.
    """
    if sys.platform == "darwin" and platform.machine() == "arm64":
        return True
    if os.environ.get(constants.ENV_CUDA_VISIBLE_DEVICES.name, "x").strip() in ("", "-1"):
        return False
    return any(os.path.exists(path) for path in GPU_DEVICE_FILES)


def choose_device(requested: str) -> str:
    """:func:`resolve_device` against this machine (see :func:`visible_devices`).

    ``auto`` on a machine that cannot have a GPU (:func:`may_have_gpu`) is the
    CPU without asking torch or onnxruntime: a run served from the cache stays torch-free,
    reports the device a load would use, and never waits for another thread's import of them.
    """
    if (requested or "").strip().lower() == DEVICE_AUTO and not may_have_gpu():
        return DEVICE_CPU
    return resolve_device(requested, visible_devices())
