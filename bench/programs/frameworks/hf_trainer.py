"""Hugging Face ``Trainer.train``: a GPT-2 built from a config (no download); a callback's clock."""

import os
import warnings

import torch
from _clock import Ends
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback, TrainingArguments
from transformers.utils import logging

warnings.filterwarnings("ignore")
logging.set_verbosity_error()
torch.manual_seed(0)
torch.set_num_threads(1)
clock = Ends()


class Clock(TrainerCallback):
    def on_step_end(self, *args: object, **kwargs: object) -> None:
        clock.tick()


steps = int(os.environ.get("STEPS", "150"))
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=128, n_head=4, n_positions=64, vocab_size=512))
ids = torch.randint(0, 512, (steps * 8, 64))
data = [{"input_ids": row, "labels": row} for row in ids]
args = TrainingArguments(
    output_dir=os.environ.get("OUT", "out"),
    per_device_train_batch_size=8,
    num_train_epochs=1,
    report_to=[],
    save_strategy="no",
    logging_strategy="no",
    disable_tqdm=True,
    use_cpu=True,
    seed=0,
)
Trainer(model=model, args=args, train_dataset=data, callbacks=[Clock()]).train()
clock.report()
