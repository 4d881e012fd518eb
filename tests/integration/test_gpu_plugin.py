"""``gpu=`` budgets in the pytest plugin, in a real pytest process of its own: the test's block
reads the scripted allocator (``MEMGAUGE_TEST_FAKE_CUDA``) and the scripted NVML
(``MEMGAUGE_TEST_FAKE_NVML``, the block's process as ``$main``) while torch is loaded; the verdict
judges the process's peak on the device, with torch's reserved bytes beside it."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]
pytest.importorskip("torch")

MIB = 1 << 20


def test_gpu_budgets_pass_and_fail_on_the_process_peak(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    frames = [{"allocated_bytes.all.peak": 300 * MIB, "reserved_bytes.all.peak": 320 * MIB}]
    cuda = pytester.path / "cuda.json"
    cuda.write_text(json.dumps({"devices": [{"uuid": "u0", "frames": frames}]}))
    nvml = pytester.path / "nvml.json"
    device = {"uuid": "GPU-u0", "name": "fake", "total": 80 << 30}
    device["frames"] = [{"used": 950 * MIB, "utilization": 50, "processes": {"$main": 930 * MIB}}]
    nvml.write_text(json.dumps({"devices": [device]}))
    monkeypatch.setenv("MEMGAUGE_TEST_FAKE_CUDA", str(cuda))
    monkeypatch.setenv("MEMGAUGE_TEST_FAKE_NVML", str(nvml))
    pytester.makepyfile(
        test_gpu="""
        import pytest
        import torch

        @pytest.mark.memory_budget(gpu="1GiB")
        def test_fits():
            pass

        @pytest.mark.memory_budget(gpu="900MiB")
        def test_too_big():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "budget exceeded: gpu 930 MiB > 900 MiB" in out, out
    assert "test_gpu.py::test_fits" in out[out.index("memgauge: budgeted tests") :]
