#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""thp_share: the share of a torchvision model's saved-for-backward bytes
that transparent huge pages back, as PyTorch allocates them (glibc malloc,
the system's THP mode), read after each forward pass from
/proc/self/pagemap and /proc/kpageflags (KPF_THP; root). Run it in the
guest (scripts/vmrun -- /usr/bin/python3 bench/thp_share.py ...); with
GLIBC_TUNABLES=glibc.malloc.hugetlb=1 for glibc's tunable.

Usage: thp_share.py [MODEL [IMAGE_SIZE [BATCH]]]   (resnet18 32 16)
"""
import os, struct, sys, torch, torchvision
torch.manual_seed(0)
torch.set_num_threads(1)
name = sys.argv[1] if len(sys.argv) > 1 else "resnet18"
size = int(sys.argv[2]) if len(sys.argv) > 2 else 32
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 16
model = getattr(torchvision.models, name)(num_classes=10)
x = torch.randn(batch, 3, size, size)
pm = os.open("/proc/self/pagemap", os.O_RDONLY)
kf = os.open("/proc/kpageflags", os.O_RDONLY)
PS = 4096
KPF_THP = 1 << 22

def thp_bytes(a, n):
    first, last = a // PS, (a + n - 1) // PS
    buf = os.pread(pm, 8 * (last - first + 1), 8 * first)
    thp = tot = 0
    for i in range(last - first + 1):
        e = struct.unpack_from("<Q", buf, 8 * i)[0]
        if not (e >> 63) & 1:
            continue
        pfn = e & ((1 << 55) - 1)
        fl = struct.unpack("<Q", os.pread(kf, 8, 8 * pfn))[0]
        tot += PS
        if fl & KPF_THP:
            thp += PS
    return thp, tot

for step in range(3):
    saved = {}
    def pack(t):
        try:
            st = t.storage()
            saved[st.data_ptr()] = st.nbytes()
        except Exception:
            pass
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(x).sum()
    thp = tot = n = 0
    big = bigthp = 0
    for a, nb in saved.items():
        if nb < PS:
            continue
        t_, r_ = thp_bytes(a, nb)
        thp += t_; tot += r_; n += 1
        if nb >= 2 << 20:
            big += r_; bigthp += t_
    loss.backward()
    print("%s size %d batch %d step %d: %d saved storages, %.1f MiB resident, %.1f %% THP-backed; storages >= 2 MiB: %.1f MiB, %.1f %% THP"
          % (name, size, batch, step, n, tot / 2**20, 100.0 * thp / max(tot, 1),
             big / 2**20, 100.0 * bigthp / max(big, 1)), flush=True)
