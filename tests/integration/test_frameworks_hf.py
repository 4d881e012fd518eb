"""The framework matrix, Hugging Face (docs/frameworks.md): ``Trainer.train`` on a GPT-2 built from a
config (2 layers, 32 wide; no download), its DataLoader wrapped by accelerate, which fetches one
batch ahead. Under memgauge the program's output and exit code are unchanged; steps are the
trainer's, every step counts its own batch's 8 samples (the first counted 16), the rate is the one
the program's own callback clocks over the same steps (within 2%; ``train_steps_per_second``
includes the warm-up), parameters and AdamW's state are exact, FLOPs are ``FlopCounterMode``'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.frameworks_run import assert_steps_roles_flops, run_pair, same_behaviour

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")

PROGRAM = """
import json, time, warnings
import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments
from transformers.utils import logging
from torch.utils.flop_counter import FlopCounterMode

warnings.filterwarnings("ignore")
logging.set_verbosity_error()
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=32, n_head=2, n_positions=16, vocab_size=64))
ids = torch.randint(0, 64, (80, 16))
data = [{"input_ids": row, "labels": row} for row in ids]

class Clock(TrainerCallback):
    def __init__(self):
        self.ends = []
    def on_step_end(self, *args, **kwargs):
        self.ends.append(time.monotonic())

clock = Clock()
args = TrainingArguments(output_dir="out", per_device_train_batch_size=8, num_train_epochs=2, report_to=[],
                         save_strategy="no", logging_strategy="no", disable_tqdm=True, use_cpu=True, seed=0)
trainer = Trainer(model=model, args=args, train_dataset=data, callbacks=[clock])
result = trainer.train()
print("steps", result.global_step)
with FlopCounterMode(display=False) as counter:
    model(input_ids=ids[:8], labels=ids[:8]).loss.backward()
opt = getattr(trainer.optimizer, "optimizer", trainer.optimizer)
print(json.dumps({
    "ends": clock.ends, "flops": counter.get_total_flops(), "own": result.metrics["train_steps_per_second"],
    "parameters": sum(p.untyped_storage().nbytes() for p in model.parameters()),
    "state": sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values()),
}))
"""


def test_hugging_face_trainer_gets_steps_samples_rates_roles_and_flops(tmp_path: Path) -> None:
    pair = run_pair(tmp_path, PROGRAM)
    same_behaviour(pair, volatile=('{"ends"', "train_runtime"))
    assert "steps 20" in pair.measured.stdout.splitlines()
    assert_steps_roles_flops(pair, 20, 8)


ACCELERATE = """
import json, time
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.flop_counter import FlopCounterMode

torch.manual_seed(0)
accelerator = Accelerator(cpu=True)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 4))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(160, 64), torch.randint(0, 4, (160,))
loader = DataLoader(TensorDataset(x, y), batch_size=8)
model, opt, loader = accelerator.prepare(model, opt, loader)
ends = []
for epoch in range(2):
    for xb, yb in loader:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(xb), yb)
        accelerator.backward(loss)
        opt.step()
        ends.append(time.monotonic())
print("loss", f"{loss.item():.6f}", "steps", len(ends))
inner = accelerator.unwrap_model(model)
with FlopCounterMode(display=False) as counter:
    torch.nn.functional.cross_entropy(inner(x[:8]), y[:8]).backward()
print(json.dumps({
    "ends": ends, "flops": counter.get_total_flops(),
    "parameters": sum(p.untyped_storage().nbytes() for p in inner.parameters()),
    "state": sum(v.untyped_storage().nbytes() for s in opt.optimizer.state.values() for v in s.values()),
}))
"""


def test_an_accelerate_loop_written_by_hand_gets_steps_samples_rates_roles_and_flops(tmp_path: Path) -> None:
    # Accelerator.prepare by hand, no Trainer: its optimizer wrapper steps torch's, its DataLoaderShard
    # fetches one batch ahead, accelerator.backward calls the loss's backward
    pair = run_pair(tmp_path, ACCELERATE)
    same_behaviour(pair, volatile=('{"ends"',))
    assert_steps_roles_flops(pair, 40, 8)
