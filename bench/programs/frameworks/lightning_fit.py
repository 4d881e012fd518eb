"""Lightning ``Trainer.fit``: an MLP, Adam, a DataLoader; the rate by a callback's clock."""

import os
import warnings

import pytorch_lightning as pl
import torch
from _clock import Ends
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")
torch.manual_seed(0)
torch.set_num_threads(1)
clock = Ends()


class Net(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 8))

    def training_step(self, batch, _):  # type: ignore[no-untyped-def]
        x, y = batch
        return torch.nn.functional.cross_entropy(self.net(x), y)

    def configure_optimizers(self):  # type: ignore[no-untyped-def]
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class Clock(pl.Callback):
    def on_train_batch_end(self, *args: object) -> None:
        clock.tick()


steps = int(os.environ.get("STEPS", "400"))
data = TensorDataset(torch.randn(steps * 64, 512), torch.randint(0, 8, (steps * 64,)))
trainer = pl.Trainer(
    max_epochs=1,
    accelerator="cpu",
    devices=1,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    callbacks=[Clock()],
)
trainer.fit(Net(), DataLoader(data, batch_size=64))
clock.report()
