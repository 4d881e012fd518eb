"""Ground truth: big allocations, each one C call on its own line that holds the GIL (or mostly
does), with sleeps between, run in the main thread, a worker thread or a spawned child
(``argv[1]``: main | thread | spawn). ``argv[2]``: a directory holding ``data.csv`` and
``array.joblib`` (made by the test), where the bytes each line made are written
(``truth.<mode>.json``: marker -> bytes, computed from the objects made)."""

import json
import multiprocessing
import os
import pickle
import sys
import threading
import time

import numpy as np

# imported before the first line measured: an import is busy Python code, and a C call right after
# it has no sleep before it (the change between two busy lines is as precise as py-spy's timing)
try:
    import pandas as pd
except ImportError:
    pd = None
try:
    import joblib
except ImportError:
    joblib = None

N = 36_000_000  # list items: 8 bytes each (a pointer to one shared small int)
PAUSE = 0.25


def work(directory: str, mode: str) -> None:
    time.sleep(PAUSE)  # the outside sampler's discovery of a spawned child (py-spy: 100 ms)
    truth = {}
    a = [1] * 10
    b = [2] * N  # LINE: repeat
    truth["repeat"] = 8 * len(b)
    time.sleep(PAUSE)
    s = a + b  # LINE: concat
    truth["concat"] = 8 * len(s)
    time.sleep(PAUSE)
    arr = np.ones(N)  # LINE: numpy
    truth["numpy"] = arr.nbytes
    time.sleep(PAUSE)
    blob = pickle.dumps(arr, protocol=5)  # LINE: dumps
    truth["dumps"] = len(blob)
    time.sleep(PAUSE)
    back = pickle.loads(blob)  # LINE: loads
    truth["loads"] = back.nbytes
    time.sleep(PAUSE)
    zeros = bytes(100_000_000)  # LINE: zeros
    # calloc'd: the kernel maps zero pages, none resident until written
    truth["zeros"] = 0 * len(zeros)
    time.sleep(PAUSE)
    raw = b"x" * 300_000_000  # LINE: bytes
    truth["bytes"] = len(raw)
    time.sleep(PAUSE)
    if pd is not None:
        frame = pd.read_csv(os.path.join(directory, "data.csv"))  # LINE: csv
        truth["csv"] = int(frame.memory_usage(deep=True).sum())
        time.sleep(PAUSE)
    if joblib is not None:
        loaded = joblib.load(os.path.join(directory, "array.joblib"))  # LINE: joblib
        truth["joblib"] = loaded.nbytes
        time.sleep(PAUSE)
    with open(os.path.join(directory, f"truth.{mode}.json"), "w") as f:
        json.dump(truth, f)


if __name__ == "__main__":
    mode, directory = sys.argv[1], sys.argv[2]
    if mode == "thread":
        t = threading.Thread(target=work, args=(directory, mode))
        t.start()
        t.join()
    elif mode == "spawn":
        p = multiprocessing.get_context("spawn").Process(target=work, args=(directory, mode))
        p.start()
        p.join()
    else:
        work(directory, mode)
