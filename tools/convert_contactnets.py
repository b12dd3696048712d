#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Converts ContactNets' cube tosses (DAIRLab/contact-nets, data/tosses_processed/N.pt) to grit's CSV.

Reads the .pt files without PyTorch: both of torch.save's formats (the legacy stream of pickles, which
the dataset uses, and the zip archive) are unpickled with the tensor rebuild and the storage classes
mapped onto numpy arrays over the raw storage bytes.

Each row of a toss (README of contact-nets): position (3), quaternion (4, real part first), linear
velocity (3), angular velocity (3), control (6, zeros); positions and linear velocities are in units of
the cube's half width 0.0524 m. The velocities are backward differences of the poses over one sample
(the linear one in the world frame, the angular one the rotation vector of R_{k-1}^T R_k over the
period: body frame), each median-filtered over 3 samples: grit's free-joint convention (linear velocity
in world, angular in body). The files have no timestamps: t = k / 148 s.

    convert_contactnets.py OUTDIR FILE.pt ...   writes OUTDIR/toss_N.csv (header t,q0..q6,v0..v5)
"""
import io
import os
import pickle
import struct
import sys
import zipfile

import numpy as np

HALF_WIDTH = 0.0524  # m, BLOCK_HALF_WIDTH of contact-nets
RATE = 148.0         # Hz, the motion capture's nominal rate

DTYPES = {"DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
          "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
          "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_}


class StorageType:
    def __init__(self, name):
        self.dtype = DTYPES[name]


def rebuild_tensor(storage, offset, size, stride, *_):
    # a view: the legacy format's storages are filled after the pickle that refers to them
    item = storage.dtype.itemsize
    return np.lib.stride_tricks.as_strided(storage[offset:], shape=tuple(size),
                                           strides=tuple(s * item for s in stride))


class Unpickler(pickle.Unpickler):
    def __init__(self, f, storages):
        super().__init__(f)
        self.storages = storages  # key -> [dtype, array or None]

    def find_class(self, module, name):
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return rebuild_tensor
        if module == "torch" and name in DTYPES:
            return StorageType(name)
        if module == "collections" and name == "OrderedDict":
            import collections
            return collections.OrderedDict
        raise pickle.UnpicklingError(f"unexpected class {module}.{name}")

    def persistent_load(self, pid):
        # ('storage', storage_type, key, location, numel[, view metadata])
        _, stype, key, _, numel = pid[:5]
        if key not in self.storages:
            self.storages[key] = self.make(stype.dtype, key, numel)
        return self.storages[key]


def load_legacy(data):
    f = io.BytesIO(data)
    for _ in range(3):  # magic number, protocol version, system info
        pickle.load(f)
    slots = {}

    class U(Unpickler):
        def make(self, dtype, key, numel):
            arr = np.zeros(numel, dtype=dtype)
            slots[key] = arr
            return arr
    obj = U(f, {}).load()
    keys = pickle.load(f)
    for key in keys:  # each storage: its element count (int64), then its bytes
        (n,) = struct.unpack("<q", f.read(8))
        arr = slots[key]
        arr[:] = np.frombuffer(f.read(n * arr.dtype.itemsize), dtype=arr.dtype, count=n)
    return obj


def load_zip(path):
    z = zipfile.ZipFile(path)
    names = z.namelist()
    root = names[0].split("/")[0]

    class U(Unpickler):
        def make(self, dtype, key, numel):
            return np.frombuffer(z.read(f"{root}/data/{key}"), dtype=dtype, count=numel)
    return U(io.BytesIO(z.read(f"{root}/data.pkl")), {}).load()


def load(path):
    if zipfile.is_zipfile(path):
        return load_zip(path)
    with open(path, "rb") as f:
        return load_legacy(f.read())


def convert(path):
    run = np.asarray(load(path), dtype=np.float64).reshape(-1, 19)
    n = run.shape[0]
    t = np.arange(n) / RATE
    pos = run[:, 0:3] * HALF_WIDTH
    quat = run[:, 3:7] / np.linalg.norm(run[:, 3:7], axis=1, keepdims=True)
    vel = run[:, 7:10] * HALF_WIDTH
    omega = run[:, 10:13]
    return np.column_stack([t, pos, quat, vel, omega])


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    header = "t," + ",".join(f"q{i}" for i in range(7)) + "," + ",".join(f"v{i}" for i in range(6))
    for path in argv[2:]:
        rows = convert(path)
        name = os.path.splitext(os.path.basename(path))[0]
        with open(os.path.join(out, f"toss_{name}.csv"), "w") as f:
            f.write(header + "\n")
            for r in rows:
                f.write(",".join(f"{x:.7g}" for x in r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
