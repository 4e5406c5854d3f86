// USearch side of scripts/bench-vectors.sh.
//
// Measures USearch (npm usearch, its prebuilt native addon) on a data
// directory written by `vectorbench gen`: connectivity 16 (2×16 on level
// 0), expansion_add 200, inner product on L2-normalised copies of the
// vectors (the same ranking as cosine), one thread; it prints the same
// "key value" lines as `vectorbench hnsw`. A search call with threads=1
// runs on this thread, so process.cpuUsage() (Node 20 has no per-thread
// clock; its own helper threads are idle during the native call) is the
// searches' CPU time. The beam width of a search is fixed when an index
// is made, so each ef searches the one-thread build saved to a file and
// loaded into an index made with expansion_search = ef.
//
//     node usearch_bench.js MODULES DIR [EF,EF] [WORKERS] [REPS]
//
// MODULES is the node_modules directory holding usearch.
"use strict";
const fs = require("fs");
const path = require("path");

function main() {
  const [modules, dir, efArg = "16,32", workersArg = "2", repsArg = "3"] = process.argv.slice(2);
  const usearch = require(path.join(modules, "usearch"));
  const efs = efArg.split(",").map(Number);
  const workers = Number(workersArg);
  const reps = Number(repsArg);
  const [n, dim, nq, k] = fs.readFileSync(path.join(dir, "meta.txt"), "utf8").trim().split(/\s+/).map(Number);
  const base = readF32(path.join(dir, "base.f32"), n * dim);
  const queries = readF32(path.join(dir, "query.f32"), nq * dim);
  const gt = new Uint32Array(copyOf(fs.readFileSync(path.join(dir, "gt.u32")), nq * k * 4));
  normalize(base, dim);
  normalize(queries, dim);
  const keys = new BigUint64Array(n);
  for (let i = 0; i < n; i++) keys[i] = BigInt(i);
  const version = require(path.join(modules, "usearch", "package.json")).version;
  console.log("usearch_version", version);

  const make = (ef) =>
    new usearch.Index({ metric: "ip", dimensions: dim, connectivity: 16, expansion_add: 200, expansion_search: ef });

  let p = make(efs[0]);
  let t = performance.now();
  p.add(keys, base, 1);
  console.log("build_1 %s", ((performance.now() - t) / 1000).toFixed(3));
  if (workers > 1) {
    const y = make(efs[0]);
    t = performance.now();
    y.add(keys, base, workers);
    console.log("build_par %s", ((performance.now() - t) / 1000).toFixed(3));
    console.log("build_workers", workers);
  }
  const file = path.join(dir, "index.usearch");
  t = performance.now();
  p.save(file);
  const save = (performance.now() - t) / 1000;

  for (const ef of efs) {
    const x = make(ef);
    x.load(file);
    const res = x.search(queries, k, 1);
    let hits = 0;
    for (let i = 0; i < nq; i++) {
      const want = new Set(gt.subarray(i * k, (i + 1) * k));
      for (let j = 0; j < k; j++) if (want.has(Number(res.keys[i * k + j]))) hits++;
    }
    console.log("recall_ef%d %s", ef, (hits / (nq * k)).toFixed(4));
    let best = 0;
    let bestCPU = 0;
    for (let r = 0; r < reps; r++) {
      const c = process.cpuUsage();
      t = performance.now();
      x.search(queries, k, 1);
      const wall = (performance.now() - t) / 1000;
      const cpu = process.cpuUsage(c);
      best = Math.max(best, nq / wall);
      bestCPU = Math.max(bestCPU, nq / ((cpu.user + cpu.system) / 1e6));
    }
    console.log("qps_ef%d %d", ef, Math.round(best));
    console.log("qps_cpu_ef%d %d", ef, Math.round(bestCPU));
  }

  console.log("save %s", save.toFixed(4));
  console.log("file_bytes", fs.statSync(file).size);
  let load = Infinity;
  for (let r = 0; r < 3; r++) {
    const x = make(efs[0]);
    t = performance.now();
    x.load(file);
    load = Math.min(load, (performance.now() - t) / 1000);
  }
  console.log("load %s", load.toFixed(4));
}

// readF32 reads count little-endian float32s (x86 and arm64 are little endian).
function readF32(file, count) {
  return new Float32Array(copyOf(fs.readFileSync(file), count * 4));
}

// copyOf returns the first size bytes of buf as an aligned ArrayBuffer.
function copyOf(buf, size) {
  if (buf.length < size) throw new Error(`short file: ${buf.length} bytes, want ${size}`);
  const ab = new ArrayBuffer(size);
  new Uint8Array(ab).set(buf.subarray(0, size));
  return ab;
}

function normalize(v, dim) {
  for (let o = 0; o < v.length; o += dim) {
    let s = 0;
    for (let j = 0; j < dim; j++) s += v[o + j] * v[o + j];
    if (s === 0) continue;
    const inv = 1 / Math.sqrt(s);
    for (let j = 0; j < dim; j++) v[o + j] *= inv;
  }
}

main();
