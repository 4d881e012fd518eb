"""Records what reached it: its arguments (``--rows R --name X``) and the environment's N."""

import argparse
import os

import memgauge

p = argparse.ArgumentParser()
p.add_argument("--rows", type=int, required=True)
p.add_argument("--scale", type=float, default=1.0)
p.add_argument("label", nargs="?")
args = p.parse_args()
memgauge.record("rows", args.rows)
memgauge.record("scale", args.scale)
memgauge.record("env_n", int(os.environ["N"]))
memgauge.record("label_ok", 1 if args.label == f"size-{os.environ['N']}" else 0)
