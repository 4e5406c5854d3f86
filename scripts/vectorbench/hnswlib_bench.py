"""python3-hnswlib side of scripts/bench-vectors.sh.

Measures hnswlib on a data directory written by `vectorbench gen`, with the
parameters knowledge/hnsw uses (cosine, M=16, ef_construction=200), and
prints the same "key value" lines as `vectorbench hnsw`.

    /usr/bin/python3 hnswlib_bench.py DIR [EF,EF] [WORKERS] [REPS]
"""
import os
import sys
import time

import hnswlib
import numpy as np


def main():
    d = sys.argv[1]
    efs = [int(e) for e in (sys.argv[2] if len(sys.argv) > 2 else "16,32").split(",")]
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else os.cpu_count()
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    n, dim, nq, k = map(int, open(os.path.join(d, "meta.txt")).read().split())
    base = np.fromfile(os.path.join(d, "base.f32"), dtype="<f4").reshape(n, dim)
    queries = np.fromfile(os.path.join(d, "query.f32"), dtype="<f4").reshape(nq, dim)
    gt = np.fromfile(os.path.join(d, "gt.u32"), dtype="<u4").reshape(nq, k)
    ids = np.arange(n)
    print("hnswlib_version", getattr(hnswlib, "__version__", "?"))

    def new():
        p = hnswlib.Index(space="cosine", dim=dim)
        p.init_index(max_elements=n, ef_construction=200, M=16, random_seed=1)
        return p

    p = new()
    t = time.perf_counter()
    p.add_items(base, ids, num_threads=1)
    print("build_1 %.3f" % (time.perf_counter() - t))
    if workers > 1:
        y = new()
        t = time.perf_counter()
        y.add_items(base, ids, num_threads=workers)
        print("build_par %.3f" % (time.perf_counter() - t))
        print("build_workers", workers)
        del y

    for ef in efs:
        p.set_ef(ef)
        labels, _ = p.knn_query(queries, k=k, num_threads=1)
        hits = sum(len(set(labels[i].tolist()) & set(gt[i].tolist())) for i in range(nq))
        print("recall_ef%d %.4f" % (ef, hits / (nq * k)))
        # num_threads=1 runs the queries on this thread, so thread_time is
        # their CPU time.
        best, best_cpu = 0.0, 0.0
        for _ in range(reps):
            t, c = time.perf_counter(), time.thread_time()
            p.knn_query(queries, k=k, num_threads=1)
            best = max(best, nq / (time.perf_counter() - t))
            best_cpu = max(best_cpu, nq / (time.thread_time() - c))
        print("qps_ef%d %.0f" % (ef, best))
        print("qps_cpu_ef%d %.0f" % (ef, best_cpu))

    path = os.path.join(d, "index.hnswlib")
    t = time.perf_counter()
    p.save_index(path)
    print("save %.4f" % (time.perf_counter() - t))
    print("file_bytes", os.path.getsize(path))
    best = float("inf")
    for _ in range(3):
        q = hnswlib.Index(space="cosine", dim=dim)
        t = time.perf_counter()
        q.load_index(path, max_elements=n)
        best = min(best, time.perf_counter() - t)
        del q
    print("load %.4f" % best)


if __name__ == "__main__":
    main()
