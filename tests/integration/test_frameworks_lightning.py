"""The framework matrix, Lightning (docs/frameworks.md): ``Trainer.fit`` steps its optimizer with a
closure (forward and backward inside ``optimizer.step``). Under memgauge the program's output and
exit code are unchanged; steps are the trainer's, the rate is the one the program's own callback
clocks over the same steps (within 2%), parameters, gradients and Adam's state are exact, and
the counted step's FLOPs are ``FlopCounterMode``'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.frameworks_run import rate_of_program, run_pair, same_behaviour

pytest.importorskip("torch")
pytest.importorskip("pytorch_lightning")

PROGRAM = """
import json, time, warnings
import torch
import pytorch_lightning as pl
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.flop_counter import FlopCounterMode

warnings.filterwarnings("ignore")
torch.manual_seed(0)

class Net(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    def training_step(self, batch, _):
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)
    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

class Clock(pl.Callback):
    def __init__(self):
        self.ends = []
    def on_train_batch_end(self, *args):
        self.ends.append(time.monotonic())

data = TensorDataset(torch.randn(160, 32), torch.randint(0, 4, (160,)))
model, clock = Net(), Clock()
trainer = pl.Trainer(max_epochs=2, accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False, callbacks=[clock])
trainer.fit(model, DataLoader(data, batch_size=8))
print("steps", trainer.global_step)
x, y = data[:8]
with FlopCounterMode(display=False) as counter:
    torch.nn.functional.cross_entropy(model.net(x), y).backward()
opt = trainer.optimizers[0]
print(json.dumps({
    "ends": clock.ends, "flops": counter.get_total_flops(),
    "parameters": sum(p.numel() * 4 for p in model.parameters()),
    "state": sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values()),
}))
"""


def test_lightning_fit_gets_steps_rates_roles_and_flops(tmp_path: Path) -> None:
    pair = run_pair(tmp_path, PROGRAM)
    same_behaviour(pair, volatile=('{"ends"',))
    truth = pair.truth
    assert pair.measured.profile is not None
    training, torch = pair.measured.profile["training"], pair.measured.profile["torch"]
    assert "steps 40" in pair.measured.stdout.splitlines()
    assert training["steps"] == 40
    own = rate_of_program(training, truth["ends"])
    assert abs(training["steps_per_second"] - own) <= 0.02 * own, (training["steps_per_second"], own)
    assert torch["max_by_role"]["parameters"] == truth["parameters"]
    assert torch["max_by_role"]["gradients"] == truth["parameters"]
    assert torch["max_by_role"]["optimizer_state"] == truth["state"]
    assert abs(training["flops_per_step"] - truth["flops"]) <= 0.02 * truth["flops"]
