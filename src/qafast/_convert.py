"""The one conversion of array-like inputs to numpy, without a copy where the dtype allows.

Accepted: numpy arrays; objects with ``__dlpack__`` (torch, JAX, CuPy, ... tensors), read
through ``numpy.from_dlpack`` as views, read-only and strided ones included; objects with the
buffer protocol; anything else ``numpy.asarray`` takes (lists, tuples, ``__array__``).

- A torch tensor that requires grad is read through ``.detach()``: the same memory, and
  autograd is not touched. A torch CPU tensor is read with ``Tensor.numpy()``, the same
  view DLPack gives, at a fraction of the cost of torch's ``__dlpack__``.
- bfloat16, which numpy has no type for, is widened to float32 by the producer (``.float()``
  for torch, ``.astype`` for JAX); float16 is read as is and widened by the caller.
- A tensor on an accelerator is copied to the host once if its producer can do that through
  DLPack (``numpy.from_dlpack(x, device="cpu")``); otherwise a ``ValueError`` says how to move
  it (``tensor.cpu()``, ``jax.device_get(array)``).

qafast never imports torch or JAX: tensors are recognised by the protocols they implement.
"""

from __future__ import annotations

import numpy as np

from .errors import InputError, InputTypeError

__all__ = ["as_array"]

_KDL_CPU = 1
_KDL_CUDA_HOST = 3
_KDL_CUDA_MANAGED = 13
_HOST_DEVICES = (_KDL_CPU, _KDL_CUDA_HOST, _KDL_CUDA_MANAGED)
_DEVICE_NAMES = {2: "cuda", 4: "opencl", 7: "vulkan", 8: "metal", 9: "vpi", 10: "rocm",
                 12: "ext_dev", 14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia"}


def _device_error(name: str, x, device) -> InputError:
    kind = _DEVICE_NAMES.get(int(device[0]), f"DLPack device type {int(device[0])}")
    return InputError(
        f"{name}: the {type(x).__name__} is on {kind}:{int(device[1])}, and its producer does "
        "not copy it to the host; qafast reads host memory: pass tensor.detach().cpu() "
        "(torch) or jax.device_get(array) (JAX)")


def _from_dlpack(x, name: str) -> np.ndarray:
    device = None
    if hasattr(x, "__dlpack_device__"):
        try:
            device = x.__dlpack_device__()
        except (AttributeError, TypeError, ValueError, RuntimeError, BufferError):
            # a producer that cannot say: let from_dlpack decide
            device = None
    if device is not None and int(device[0]) not in _HOST_DEVICES:
        try:
            return np.from_dlpack(x, device="cpu")
        except (BufferError, RuntimeError, TypeError, ValueError, NotImplementedError):
            raise _device_error(name, x, device) from None
    try:
        return np.from_dlpack(x)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        widened = _widen(x)
        if widened is not None:
            return np.from_dlpack(widened)
        raise InputTypeError(f"{name}: cannot read the {type(x).__name__} through DLPack ({e})") \
            from None


def _widen(x):
    """bfloat16 (no numpy type) as float32, by the producer's own method, or None."""
    dtype = str(getattr(x, "dtype", ""))
    if "bfloat16" not in dtype:
        return None
    if callable(getattr(x, "float", None)):  # torch
        return x.float()
    if callable(getattr(x, "astype", None)):  # JAX and other array-API producers
        return x.astype(np.float32)
    return None


def as_array(x, name: str) -> np.ndarray:
    """``x`` as a numpy array, sharing its memory where possible (see the module docstring).

    Examples
    --------
    >>> from qafast._convert import as_array
    >>> as_array([[1, 2], [3, 4]], "scores").shape
    (2, 2)
    >>> a = as_array(memoryview(bytearray(8)).cast("d"), "scores")
    >>> a.dtype, a.shape
    (dtype('float64'), (1,))
    """
    if isinstance(x, np.ndarray):
        return x
    if getattr(x, "requires_grad", False) and callable(getattr(x, "detach", None)):
        x = x.detach()  # torch: a view of the same memory outside the autograd graph
    if type(x).__module__.startswith("torch") and callable(getattr(x, "numpy", None)):
        try:
            # the same memory as DLPack gives, without its Python-level checks (a CPU
            # tensor of a dtype numpy has); anything else goes through DLPack below
            return x.numpy()
        except (TypeError, RuntimeError):
            pass
    if hasattr(x, "__dlpack__"):
        return _from_dlpack(x, name)
    if isinstance(x, (list, tuple)):
        return _nested(x, name)
    try:
        view = memoryview(x)
    except TypeError:
        return _nested(x, name)
    return np.asarray(view)


def _nested(x, name: str) -> np.ndarray:
    try:
        return np.asarray(x)
    except ValueError as e:  # rows of different lengths, in numpy's words
        raise InputError(f"{name}: not a rectangular array ({e})") from None
