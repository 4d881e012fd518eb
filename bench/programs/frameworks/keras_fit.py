"""Keras 3 ``model.fit`` on the torch backend: Dense layers, Adam; a callback's clock."""

import os

os.environ["KERAS_BACKEND"] = "torch"

import keras
import numpy as np
import torch
from _clock import Ends

torch.set_num_threads(1)
keras.utils.set_random_seed(0)
clock = Ends()


class Clock(keras.callbacks.Callback):
    def on_train_batch_end(self, batch: int, logs: object = None) -> None:
        clock.tick()


steps = int(os.environ.get("STEPS", "300"))
model = keras.Sequential(
    [keras.Input((512,)), keras.layers.Dense(1024, activation="relu"), keras.layers.Dense(8)]
)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
x = np.random.rand(steps * 64, 512).astype("float32")
y = np.random.rand(steps * 64, 8).astype("float32")
model.fit(x, y, batch_size=64, epochs=1, verbose=0, shuffle=False, callbacks=[Clock()])
clock.report()
