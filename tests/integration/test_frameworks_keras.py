"""The framework matrix, Keras 3 on the torch backend (docs/frameworks.md): ``model.fit`` updates its
weights with Keras's own optimizer, never a ``torch.optim`` step. Under memgauge the program's
output and exit code are unchanged; its train steps are the steps (the optimizer's iteration
count), each counting its own batch (not the one ``fit`` reads first to build), the rate is the one
the program's own callback clocks over the same steps (within 2%), parameters, gradients and Adam's
variables (moments, iteration, learning rate) as optimizer state are exact, and the counted step's
FLOPs are ``FlopCounterMode``'s."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.integration.frameworks_run import assert_steps_roles_flops, run_pair, same_behaviour

pytest.importorskip("torch")
if importlib.util.find_spec("keras") is None:  # importing it here would pick TensorFlow's backend
    pytest.skip("keras is not installed", allow_module_level=True)

PROGRAM = """
import os
os.environ["KERAS_BACKEND"] = "torch"
import json, time
import keras, numpy as np, torch
from torch.utils.flop_counter import FlopCounterMode

keras.utils.set_random_seed(0)
layers = [keras.Input((16,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)]
model = keras.Sequential(layers)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
x, y = np.random.rand(160, 16).astype("float32"), np.random.rand(160, 4).astype("float32")

class Clock(keras.callbacks.Callback):
    ends = []
    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.monotonic())

history = model.fit(x, y, batch_size=8, epochs=2, verbose=0, shuffle=False, callbacks=[Clock()])
print("loss", f"{history.history['loss'][-1]:.6f}", "iterations", int(model.optimizer.iterations.numpy()))
xb, yb = torch.from_numpy(x[:8]), torch.from_numpy(y[:8])
with FlopCounterMode(display=False) as counter:
    ((model(xb) - yb) ** 2).mean().backward()
print(json.dumps({
    "ends": Clock.ends, "flops": counter.get_total_flops(),
    "parameters": sum(w.value.untyped_storage().nbytes() for w in model.weights),
    "state": sum(v.value.untyped_storage().nbytes() for v in model.optimizer.variables),
}))
"""


def test_keras_fit_on_torch_gets_steps_rates_optimizer_state_and_flops(tmp_path: Path) -> None:
    pair = run_pair(tmp_path, PROGRAM)
    same_behaviour(pair, volatile=('{"ends"',))
    assert "iterations 40" in pair.measured.stdout
    assert_steps_roles_flops(pair, 40, 8)
