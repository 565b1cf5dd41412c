# SPDX-License-Identifier: LGPL-2.1-or-later
"""Distributed data-parallel training with tiertrain in every rank.

    torchrun --standalone --nproc_per_node=2 ddp_train.py
             [--untiered | --compare] [--steps N] [--report DIR]

Each rank builds the same small CNN (same seed), wraps it in
DistributedDataParallel (gloo, CPU) and calls tiertrain.torch.attach() on
it: each rank has its own session, which evicts its saved tensors to the
slow tier after their forward pass and brings them back for the backward
pass. The ranks train on different batches; DDP averages the gradients,
so every rank holds the same parameters after every step. Training is
deterministic (one thread per rank, torch.use_deterministic_algorithms),
so the losses are bit for bit those of the same run with --untiered.

When the module has a fast-tier budget (`tierctl config set budget_mib=N`
or the module parameter budget_mib), the ranks' sessions share it, max-min
fair (Documentation/scheduler.md, "Many processes"): after each forward
pass the ranks meet at a barrier and record their budget in force
(budget_bytes, their share) and their registered bytes on the fast tier.

With --compare each rank trains twice in the same process: untiered, then
tiered, each time a new model and optimizer from the same seed; the
second run's losses and parameters are then bit for bit the first's.

With --report DIR each rank writes DIR/rank<R>.json (losses as float.hex,
a digest of the final parameters, the session's stats, the samples), and
with --compare also DIR/rank<R>-untiered.json for the untiered run;
lib/python/tests/test_ddp.py runs this script and compares them.
"""
import argparse
import hashlib
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

import tiertrain.torch as ttt


class CNN(nn.Module):
    """Batch 32 of 3x32x32: about 8 MiB of saved tensors per step."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.head = nn.Linear(16 * 16 * 16, 10)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


def say(line):
    """One write per line: the ranks share the terminal."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def train(rank, steps, tiered):
    """Train a new model for @steps steps, tiered or not: the report."""
    torch.manual_seed(0)                    # the same model in every rank
    model = DDP(CNN())
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    h = ttt.attach(model) if tiered else None

    g = torch.Generator().manual_seed(1 + rank)     # each rank its batch
    x = torch.randn(32, 3, 32, 32, generator=g)
    y = torch.randint(0, 10, (32,), generator=g)
    losses, samples = [], []
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if h is not None:
            # every rank between its forward and its backward pass: the
            # sessions' shares of the module's budget, at one moment
            dist.barrier()
            st = h.stats()
            samples.append({"step": step,
                            "budget_bytes": st["budget_bytes"],
                            "fast_registered_bytes":
                                st["fast_registered_bytes"]})
            dist.barrier()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        say("rank %d step %d loss %.6f%s" % (rank, step, losses[-1],
                                            "" if tiered else " untiered"))

    def digest(tensors):
        d = hashlib.sha256()
        for t in tensors:
            d.update(t.detach().numpy().tobytes())
        return d.hexdigest()

    out = {"rank": rank, "world": dist.get_world_size(),
           "tiered": h is not None,
           "losses": [v.hex() for v in losses],
           # the same parameters in every rank (DDP); BatchNorm's running
           # statistics are each rank's own after its last forward pass
           "params": digest(model.parameters()),
           "buffers": digest(model.buffers()), "samples": samples}
    if h is not None:
        st = h.stats()
        out["backend"] = h.backend
        out["stats"] = {k: v for k, v in st.items() if k != "session"}
        due = st["ontime_bytes"] + st["late_bytes"]
        say("rank %d: evicted %d, prefetched %d bytes, on time %.1f%%, "
            "budget in force %d, fast peak %d bytes" % (
                rank, st["evicted_bytes"], st["prefetched_bytes"],
                100.0 * st["ontime_bytes"] / due if due else 0.0,
                st["budget_bytes"], st["fast_peak_bytes"]))
        dist.barrier()          # no session closes before all have reported
        h.detach()
    return out


def main():
    ap = argparse.ArgumentParser()
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--untiered", action="store_true")
    how.add_argument("--compare", action="store_true")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--report", metavar="DIR")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    dist.init_process_group("gloo")
    rank = dist.get_rank()

    runs = []
    if args.untiered or args.compare:
        runs.append(("rank%d-untiered.json" if args.compare else
                     "rank%d.json", train(rank, args.steps, False)))
    if not args.untiered:
        runs.append(("rank%d.json", train(rank, args.steps, True)))
    if args.report:
        for name, out in runs:
            with open(os.path.join(args.report, name % rank), "w") as f:
                json.dump(out, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
