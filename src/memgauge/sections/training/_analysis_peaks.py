"""Known accelerators' dense peak FLOP/s per dtype, for MFU.

Dense figures only: NVIDIA's datasheets print the tensor-core figures "with sparsity" (2:4
structured), twice the dense ones; the dense half is what a training step can reach, and is the
figure here. ``float32`` is the plain FP32 (CUDA core) peak: torch multiplies float32 matrices in
full FP32 unless the program allows TF32 (``torch.backends.cuda.matmul.allow_tf32``), and MFU
against TF32's far higher peak would flatter nobody honestly. On an H100 the best bf16 rate
measured here was 771-781 TFLOP/s on an 8192-cube product (docs/gpu-facts.md), against 989 on
the datasheet: an MFU near 0.8 is the practical ceiling, not 1.
"""

from __future__ import annotations

from dataclasses import dataclass

T = 1e12


@dataclass(frozen=True)
class DevicePeak:
    """A device's peak in one dtype, in FLOP/s, and where the figure comes from."""

    flops_per_second: float
    source: str


_H100_SXM = "NVIDIA H100 Tensor Core GPU datasheet (SXM5; dense, half the sparsity figures)"
_H100_PCIE = "NVIDIA H100 Tensor Core GPU datasheet (PCIe; dense, half the sparsity figures)"
_H200 = "NVIDIA H200 Tensor Core GPU datasheet (SXM; dense, half the sparsity figures)"
_A100 = "NVIDIA A100 Tensor Core GPU datasheet (SXM4 and PCIe; dense)"
_V100 = "NVIDIA V100 Tensor Core GPU datasheet"
_L40S = "NVIDIA L40S datasheet (dense, half the sparsity figures)"
_L4 = "NVIDIA L4 Tensor Core GPU datasheet (dense, half the sparsity figures)"
_A10 = "NVIDIA A10 Tensor Core GPU datasheet (dense, half the sparsity figures)"
_T4 = "NVIDIA T4 Tensor Core GPU datasheet"

# (words the device name must contain, words it must not, {dtype: TFLOP/s}, source); first match wins
_TABLE: tuple[tuple[tuple[str, ...], tuple[str, ...], dict[str, float], str], ...] = (
    (("H100", "PCIE"), (), {"bfloat16": 756, "float16": 756, "float32": 51.2, "float64": 25.6}, _H100_PCIE),
    (("H100",), (), {"bfloat16": 989.5, "float16": 989.5, "float32": 67, "float64": 34}, _H100_SXM),
    (("H200",), (), {"bfloat16": 989.5, "float16": 989.5, "float32": 67, "float64": 34}, _H200),
    (("A100",), (), {"bfloat16": 312, "float16": 312, "float32": 19.5, "float64": 9.7}, _A100),
    (("V100", "PCIE"), (), {"float16": 112, "float32": 14, "float64": 7}, _V100),
    (("V100",), (), {"float16": 125, "float32": 15.7, "float64": 7.8}, _V100),
    (("L40S",), (), {"bfloat16": 362.05, "float16": 362.05, "float32": 91.6}, _L40S),
    (("L4",), ("L40",), {"bfloat16": 121, "float16": 121, "float32": 30.3}, _L4),
    (("A10",), ("A100",), {"bfloat16": 125, "float16": 125, "float32": 31.2}, _A10),
    (("T4",), (), {"float16": 65, "float32": 8.1}, _T4),
)


def known_peak(device_name: str, dtype: str) -> DevicePeak | None:
    """The datasheet's dense peak of ``device_name`` (as ``torch.cuda.get_device_name`` gives it)
    in ``dtype``; None for a device or dtype not in the table."""
    name = device_name.upper().replace("-", " ")
    words = name.split()
    for needed, excluded, peaks, source in _TABLE:
        if all(_has(name, words, w) for w in needed) and not any(_has(name, words, w) for w in excluded):
            tflops = peaks.get(dtype)
            return None if tflops is None else DevicePeak(tflops * T, source)
    return None


def _has(name: str, words: list[str], word: str) -> bool:
    # whole words, so that "L4" is not found in "L40S"; "PCIE" may be glued ("80GB PCIe")
    return word in words or (word == "PCIE" and word in name)
