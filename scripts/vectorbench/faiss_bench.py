"""FAISS side of scripts/bench-vectors.sh.

Measures FAISS IndexHNSWFlat (Debian python3-faiss) on a data directory
written by `vectorbench gen`: M=16, efConstruction 200, inner product on
L2-normalised copies of the vectors (the same ranking as cosine), and
prints the same "key value" lines as `vectorbench hnsw`. Searches and the
one-thread build run with OpenMP limited to one thread, so they run on
this thread and time.thread_time() is their CPU time.

    /usr/bin/python3 faiss_bench.py DIR [EF,EF] [WORKERS] [REPS]
"""
import os
import sys
import time

import faiss
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
    base = np.ascontiguousarray(base)
    queries = np.ascontiguousarray(queries)
    faiss.normalize_L2(base)
    faiss.normalize_L2(queries)
    print("faiss_version", faiss.__version__)

    def new():
        p = faiss.IndexHNSWFlat(dim, 16, faiss.METRIC_INNER_PRODUCT)
        p.hnsw.efConstruction = 200
        return p

    faiss.omp_set_num_threads(1)
    p = new()
    t = time.perf_counter()
    p.add(base)
    print("build_1 %.3f" % (time.perf_counter() - t))
    if workers > 1:
        faiss.omp_set_num_threads(workers)
        y = new()
        t = time.perf_counter()
        y.add(base)
        print("build_par %.3f" % (time.perf_counter() - t))
        print("build_workers", workers)
        del y
        faiss.omp_set_num_threads(1)

    for ef in efs:
        p.hnsw.efSearch = ef
        _, labels = p.search(queries, k)
        hits = sum(len(set(labels[i].tolist()) & set(gt[i].tolist())) for i in range(nq))
        print("recall_ef%d %.4f" % (ef, hits / (nq * k)))
        best, best_cpu = 0.0, 0.0
        for _ in range(reps):
            t, c = time.perf_counter(), time.thread_time()
            p.search(queries, k)
            best = max(best, nq / (time.perf_counter() - t))
            best_cpu = max(best_cpu, nq / (time.thread_time() - c))
        print("qps_ef%d %.0f" % (ef, best))
        print("qps_cpu_ef%d %.0f" % (ef, best_cpu))

    path = os.path.join(d, "index.faiss")
    t = time.perf_counter()
    faiss.write_index(p, path)
    print("save %.4f" % (time.perf_counter() - t))
    print("file_bytes", os.path.getsize(path))
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        q = faiss.read_index(path)
        best = min(best, time.perf_counter() - t)
        del q
    print("load %.4f" % best)


if __name__ == "__main__":
    main()
