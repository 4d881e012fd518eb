"""The prediction without the hardware against real runs, on CPU: for each model shape (an MLP, a
small conv net, a small transformer block), the tensor peak predicted under fake tensors
(``memgauge fit --predict-gpu``'s run, ``sweep.predict_step``) and the one the torch tracker
measured in a real run of the same program at the same batch, and the error.

    python bench/predict_bench.py [--batch 64]

``SHAPES`` are also the programs of ``tests/integration/test_predict.py``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

SHAPES = {
    "mlp": """
import torch
BATCH = 64
torch.manual_seed(0)
layers = [m for _ in range(4) for m in (torch.nn.Linear(512, 512), torch.nn.ReLU())]
model = torch.nn.Sequential(*layers, torch.nn.Linear(512, 10))
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    x, y = torch.randn(BATCH, 512), torch.randint(0, 10, (BATCH,))
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
""",
    "conv": """
import torch
BATCH = 64
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
    torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(64 * 16 * 16, 10),
)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for _ in range(3):
    x, y = torch.randn(BATCH, 3, 32, 32), torch.randint(0, 10, (BATCH,))
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
""",
    "transformer": """
import torch
BATCH = 64
torch.manual_seed(0)
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(1000, 128)
        self.block = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
        self.head = torch.nn.Linear(128, 1000)
    def forward(self, tokens):
        return self.head(self.block(self.embed(tokens)))
model = Model()
opt = torch.optim.AdamW(model.parameters())
for _ in range(3):
    tokens = torch.randint(0, 1000, (BATCH, 64))
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(tokens).flatten(0, 1), tokens.flatten()).backward()
    opt.step()
""",
}


def compare(name: str, batch: int, directory: Path) -> tuple[int, int]:
    """(predicted, measured) tensor peaks of shape ``name`` at ``batch``."""
    from memgauge.runner import RunOptions, Target, run_program
    from memgauge.sweep import predict_step

    script = directory / f"{name}.py"
    script.write_text(SHAPES[name])
    target = Target("script", str(script))
    predicted = predict_step(target, "BATCH", batch, str(directory))
    if predicted.error is not None:
        raise RuntimeError(f"{name}: {predicted.error}")
    env = {**os.environ, "BATCH": str(batch)}
    source = SHAPES[name].replace("BATCH = 64", f"BATCH = {batch}")
    script.write_text(source)
    profile = run_program(target, RunOptions(lines="off", env=env, cwd=str(directory)))
    if profile.torch is None or profile.exit.code != 0:
        raise RuntimeError(f"{name}: the real run failed (exit {profile.exit.code})")
    return predicted.peak_bytes, profile.torch.peak_bytes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    print("| shape | batch | predicted tensor peak | measured tensor peak | error |")
    print("| --- | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for name in SHAPES:
            predicted, measured = compare(name, args.batch, Path(tmp))
            error = predicted / measured - 1
            print(f"| {name} | {args.batch} | {predicted:,} B | {measured:,} B | {100 * error:+.2f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
