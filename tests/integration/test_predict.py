"""The prediction without the hardware: the first training steps under fake tensors, checked
against real runs of the same programs on CPU (three model shapes, within 10% of the measured tensor
peak), at a batch no machine here could hold (so nothing was allocated), and on a real GPU when one
is lent (``gpu`` mark)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

from memgauge.runner import RunOptions, Target, run_program
from memgauge.sweep import predict_gpu, predict_step

pytest.importorskip("torch")

GPU_MLP = """
import json, torch
BATCH = 64
torch.manual_seed(0)
layers = [m for _ in range(4) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())]
model = torch.nn.Sequential(*layers, torch.nn.Linear(512, 10)).cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x, y = torch.randn(BATCH, 512, device="cuda"), torch.randint(0, 10, (BATCH,), device="cuda")
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
"""
# after the loop: the allocated peak, and what stays allocated with no tensor left (cuBLAS's
# workspaces, docs/gpu-facts.md section 1), which the prediction names as an overhead instead
FIGURES = """
peak = torch.cuda.max_memory_allocated()
del model, opt, x, y, layers
import gc; gc.collect()
json.dump({"max": peak, "workspaces": torch.cuda.memory_allocated()}, open("real.json", "w"))
"""
BENCH = Path(__file__).resolve().parents[2] / "bench" / "predict_bench.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("predict_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("shape", ["mlp", "conv", "transformer"])
def test_the_predicted_tensor_peak_is_within_10_percent_of_a_real_run(shape: str, tmp_path: Path) -> None:
    predicted, measured = _bench().compare(shape, 48, tmp_path)
    assert measured > 0
    assert abs(predicted / measured - 1) <= 0.10, (predicted, measured)


def test_a_batch_too_large_for_this_machine_is_predicted_without_allocating_it(tmp_path: Path) -> None:
    script = tmp_path / "mlp.py"
    # the program's end leaves a mark: the prediction must stop after its second optimizer step
    script.write_text(_bench().SHAPES["mlp"] + "\nopen('finished', 'w').close()\n")
    target = Target("script", str(script))
    # batches where forward and backward hold the peak (below ~1500, Adam's step does)
    small = [predict_step(target, "BATCH", b, str(tmp_path)) for b in (4096, 8192)]
    per_sample = (small[1].peak_bytes - small[0].peak_bytes) // 4096
    huge = 1 << 22  # 4 Mi samples: about 48 GiB of activations and module outputs
    expected = small[0].peak_bytes + per_sample * (huge - 4096)
    env = {**os.environ, "MEMGAUGE_PREDICT": str(tmp_path / "huge.json"), "BATCH": str(huge)}
    source = script.read_text().replace("BATCH = 64", f"BATCH = {huge}")
    script.write_text(source)
    profile = run_program(target, RunOptions(lines="off", env=env, cwd=str(tmp_path)))
    assert profile.exit.code == 0
    data = json.loads((tmp_path / "huge.json").read_text())
    assert data["peak_bytes"] == expected > 40 << 30  # linear in the batch, to the byte
    assert profile.peak.resident_bytes < 2 << 30  # nothing of it was allocated
    assert not (tmp_path / "finished").exists()


def test_a_program_that_cannot_run_under_fake_tensors_gets_a_reason(tmp_path: Path) -> None:
    script = tmp_path / "item.py"
    # .item() on a fake tensor before the first optimizer step: the prediction cannot go on
    script.write_text(
        _bench().SHAPES["mlp"].replace("opt.zero_grad()", "opt.zero_grad(); print(x.sum().item())")
    )
    step = predict_step(Target("script", str(script)), "BATCH", 64, str(tmp_path))
    assert step.error is not None and "before its second optimizer step" in step.error
    prediction = predict_gpu(Target("script", str(script)), "BATCH", 64, 80 << 30, str(tmp_path))
    assert prediction.largest_batch is None and prediction.total_bytes is None


@pytest.mark.gpu
def test_on_a_gpu_the_prediction_is_within_10_percent_of_the_allocated_peak(tmp_path: Path) -> None:
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    script = tmp_path / "gpu.py"
    source = GPU_MLP + FIGURES
    script.write_text(source)
    prediction = predict_gpu(Target("script", str(script)), "BATCH", 2048, 80 << 30, str(tmp_path))
    assert prediction.allocated_bytes is not None
    profile = run_program(Target("script", str(script)), RunOptions(lines="off", cwd=str(tmp_path)))
    assert profile.exit.code == 0
    real = json.loads((tmp_path / "real.json").read_text())
    tensors = real["max"] - real["workspaces"]
    assert abs(prediction.allocated_bytes - tensors) <= 0.10 * tensors, (prediction.allocated_bytes, real)
