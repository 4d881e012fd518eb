"""The framework matrix, torch's own compilers and tracers (docs/frameworks.md): ``torch.compile``
training, ``torch.func``, ``torch.jit.script``/``trace``, checkpointing (both kinds), DDP and FSDP's
``fully_shard`` (gloo, world size 1) give the same output and exit code under memgauge as plain;
the compiled loop's steps, roles and FLOPs are the truth; a closure-driven optimizer (LBFGS) gets
its FLOPs counted.

``torch.compile`` runs with the ``aot_eager`` backend: Dynamo and AOTAutograd trace as with the
default one (where memgauge's hooks broke the program), without inductor's C++ build, minutes on
a loaded CI runner. The default backend was checked by hand (docs/frameworks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.frameworks_run import run_pair, same_behaviour

pytest.importorskip("torch")

COMPILED = """
import json, os, torch
from torch.func import functional_call, grad, vmap
from torch.utils.checkpoint import checkpoint
from torch.utils.flop_counter import FlopCounterMode

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
cmodel = torch.compile(model, backend="aot_eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
for i in range(8):
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(cmodel(x), y)
    loss.backward()
    opt.step()
print("compiled", f"{loss.item():.6f}")
truth = {
    "parameters": sum(p.numel() * 4 for p in model.parameters()),
    "state": sum(v.untyped_storage().nbytes() for s in opt.state.values() for v in s.values()),
}
with FlopCounterMode(display=False) as counter:  # one step of the same model, forward and backward
    torch.nn.functional.cross_entropy(model(x), y).backward()
truth["flops"] = counter.get_total_flops()
opt.zero_grad()

def mlp():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))

a, b = torch.randn(8, 16), torch.randn(8, 4)

def train(module, call):
    sgd = torch.optim.SGD(module.parameters(), lr=0.1)
    for _ in range(3):
        sgd.zero_grad()
        out = (call(a) - b).pow(2).mean()
        out.backward()
        sgd.step()
    return f"{out.item():.6f}"

m = mlp()
params = {k: v.detach() for k, v in m.named_parameters()}
def loss_of(p, xi, yi):
    return (functional_call(m, p, (xi,)) - yi).pow(2).mean()
g = grad(loss_of)(params, a, b)
per = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, a.unsqueeze(1), b.unsqueeze(1))
print("func", *(f"{sum(v.sum().item() for v in d.values()):.6f}" for d in (g, per)))
m = mlp(); s = torch.jit.script(m)
print("jit.script", train(s, s))
m = mlp(); t = torch.jit.trace(m, a)
print("jit.trace", train(m, t))
m = mlp()
print("checkpoint", train(m, lambda v: checkpoint(m, v, use_reentrant=False)))
m = mlp()
print("checkpoint reentrant", train(m, lambda v: checkpoint(m, v.requires_grad_(), use_reentrant=True)))
import torch.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(20000 + os.getpid() % 20000))
dist.init_process_group("gloo", rank=0, world_size=1)
m = mlp(); d = torch.nn.parallel.DistributedDataParallel(m)
print("ddp", train(d, d))
from torch.distributed.fsdp import fully_shard
m = mlp()
for layer in m:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)
fully_shard(m)
print("fsdp", train(m, m))
dist.destroy_process_group()
print(json.dumps(truth))
"""


def test_compiled_loop_and_tracers_run_unchanged_with_exact_roles_and_flops(tmp_path: Path) -> None:
    pair = run_pair(tmp_path, COMPILED)
    same_behaviour(pair)
    assert "global hooks" not in pair.measured.stderr  # torch's warning about memgauge's hooks
    truth = pair.truth
    assert pair.measured.profile is not None
    torch, training = pair.measured.profile["torch"], pair.measured.profile["training"]
    # 8 compiled steps, then script, trace, two checkpoints, DDP and FSDP (fully_shard) with 3 each
    assert training["steps"] == 8 + 6 * 3
    steady = [s for s in torch["steps"] if 2 <= s["index"] < 8]
    assert steady, torch["steps"]
    for s in steady:  # the compiled model's, measured from outside its compiled region
        assert s["end_by_role"]["parameters"] == truth["parameters"]
        assert s["end_by_role"]["gradients"] == truth["parameters"]
        assert s["end_by_role"]["optimizer_state"] == truth["state"]
    assert training["flops_step"] == 3
    assert abs(training["flops_per_step"] - truth["flops"]) <= 0.02 * truth["flops"]


LBFGS = """
import json, torch
from torch.utils.flop_counter import FlopCounterMode
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=3, history_size=4)
x, y = torch.randn(64, 32), torch.randn(64, 1)
calls = []
def closure():
    opt.zero_grad()
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    calls.append(1)
    return loss
per_step = []
for _ in range(6):
    before = len(calls)
    loss = opt.step(closure)
    per_step.append(len(calls) - before)
print("lbfgs", f"{loss.item():.6f}", per_step)
with FlopCounterMode(display=False) as counter:
    (model(x) - y).pow(2).mean().backward()
print(json.dumps({"flops_per_closure": counter.get_total_flops(), "calls": per_step}))
"""


def test_closure_driven_steps_get_their_forward_and_backward_flops(tmp_path: Path) -> None:
    pair = run_pair(tmp_path, LBFGS)
    same_behaviour(pair)
    truth = pair.truth
    assert pair.measured.profile is not None
    training = pair.measured.profile["training"]
    assert training["steps"] == 6
    at = training["flops_step"]
    expected = truth["flops_per_closure"] * truth["calls"][at]  # the closure runs calls[at] times
    assert expected > 0
    assert abs(training["flops_per_step"] - expected) <= 0.02 * expected
