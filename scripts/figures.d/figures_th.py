"""The thesis's figures and tables (concurrent assembly, Paper I; matrix-free operators on
GPUs, Paper II): update overhead (Table I), contention (Figs. 2/3), FEM assembly with
artificial work (Table II, Fig. 4) and the library's assembly strategies, operator setup
(Table 3.5), local-matrix sizes (Table 3.6), operator rates and intensities (Figs. 2.3,
3.6-3.9); on this CPU and from the GPU records on file."""
import re

from figlib import Figure, NoData, new_fig, pick
from figures_mf import gpu_machines

TABLE_I = {"nothing": (12.5, 30.8, 29.3, 52.0), "tsx": (104.7, 106.5, 112.0, 142.3),
           "atomic-cas": (164.1, None, None, None), "mutex": (339.9, 331.5, 352.9, 356.2)}
TABLE_II = {  # (work, method) -> ms at 1, 2 threads (Rock), serial alone
    (1, "serial"): (4.09, None), (1, "tsx"): (10.87, 6.18), (1, "atomic-cas"): (9.52, 5.20),
    (1, "mutex"): (23.20, 12.68), (100, "serial"): (6.50, None), (100, "tsx"): (13.47, 7.79),
    (100, "atomic-cas"): (12.30, 6.58), (100, "mutex"): (26.39, 14.33),
    (1000, "serial"): (26.33, None), (1000, "tsx"): (33.38, 17.68),
    (1000, "atomic-cas"): (39.41, 20.46), (1000, "mutex"): (46.26, 24.31)}
TABLE_35 = {(2, 1): (6.2, 0.33, 7.9, 0.4), (2, 2): (8, 0.25, 10, 0.17), (2, 4): (14, 0.18, 18, 0.1),
            (3, 1): (8.4, 0.48, 12, 0.43), (3, 2): (18, 0.24, 23, 0.15),
            (3, 4): (66, 0.075, None, 0.1)}
TABLE_III = {  # method -> (s at 1 thread, speed-up at 2 threads, at 16) on Rock, 1024 particles
    "locks-basic": (8.99, 1.9, 14.0), "tsx-basic": (4.14, 1.8, 6.7), "cas-basic": (7.09, 2.0, 14.2),
    "locks-blocked": (2.37, 2.0, 15.8), "tsx-blocked": (1.98, 2.0, 14.1),
    "cas-blocked": (3.34, 2.0, 15.2), "private-copies": (1.24, 2.0, 13.8)}
TABLE_33 = [  # (experiment, failed % of updates, conflict %, load %, store %) on Rock
    ("overhead, 1 double", 0.00026, None, None, None), ("overhead, 8 doubles", 0.0004, None, None, None),
    ("contention, q = 1", 13.2, None, None, None), ("contention, q = 0.001", 0.099, None, None, None),
    ("FEM, 1 flop", 18.8, 0.4, 95.6, 4.0), ("FEM, 1000 flops", 19.2, 0.2, 96.7, 3.1),
    ("N-body", 0.4, 51.9, 34.0, 3.1)]
KIND = {"csr": "CSR SpMV", "matfree-elemmat": "element matrix", "matfree-sumfact": "sum factorization"}


def updates(ctx, kind):
    # fem: n = 46 is 4232 triangles, about Paper I's 4146 (smoke: 800)
    extra = ["--n", pick(ctx.mode, 46, 46, 20)] if kind == "fem" else []
    reps = pick(ctx.mode, 5, 11, 1)
    if kind == "nbody":  # Paper I's 1024 particles (smoke: 128); 15 runs of 40 steps
        extra = ["--particles", pick(ctx.mode, 1024, 1024, 128)]
        reps = pick(ctx.mode, 3, 11, 1)
    return ctx.run(["updates", "--kind", kind] + extra, reps=reps)


def operator_sweeps(ctx):
    sizes = pick(ctx.mode, (16384, 65536), (65536, 262144, 1048576), (4096,))
    gemm = pick(ctx.mode, 1024, 2048, 256)
    return {d: ctx.run(["operator", "--sweep", "--dofs", d, "--gemm-n", gemm],
                       reps=pick(ctx.mode, 3, 5, 1))
            for d in sizes}


def draw_overhead(ctx, fig):
    recs = updates(ctx, "overhead")
    ours = {}
    for r in recs:
        p = r["params"]
        if p.get("kind") == "overhead":
            ours[(p["method"], p["doubles_per_update"])] = r["metrics"]["ns_per_update"]
    methods = [m for m in ("nothing", "tsx", "atomic-cas", "mutex", "spin")
               if any(k[0] == m for k in ours)]
    rows = []
    for m in methods:
        pv = TABLE_I.get(m, (None,) * 4)
        rows.append([m] + [ours.get((m, k), "") for k in (1, 2, 4, 8)] + list(pv))
    header = ["method", "ns 1", "ns 2", "ns 4", "ns 8", "paper 1", "paper 2", "paper 4", "paper 8"]
    tsx = next((r["params"].get("tsx_mode") for r in recs if r["params"].get("method") == "tsx"), "")
    cap = ctx.caption(fig, recs,
                      "median time per protected update of 1, 2, 4, 8 doubles on one thread "
                      "(feaccel-bench updates --kind overhead); tsx here is its %s path (no RTM "
                      "on this CPU), spin is a spin lock" % (tsx or "RTM"),
                      "Rock: nothing 12.5, transactions 104.7, CAS 164.1, locks 339.9 ns for one "
                      "double; a transaction ≈ 3× faster than a lock")
    ctx.table(fig, header, rows, cap, "Update overhead, ns per update (Paper I Table I)")


def draw_contention(ctx, fig):
    recs = [r for r in updates(ctx, "contention") if r["params"].get("kind") == "contention"]
    f, (a, b) = new_fig(10, 4.4, ncols=2)
    rows = []
    by = {}
    for r in recs:
        by.setdefault(r["params"]["method"], []).append(r)
    for m, rs in by.items():
        rs.sort(key=lambda r: float(r["params"]["q"]))
        q = [max(float(r["params"]["q"]), 1e-4) for r in rs]
        a.semilogx(q, [r["metrics"]["ns_per_update"] for r in rs], "o-", ms=3, label=m)
        b.semilogx(q, [max(r["metrics"]["conflicts_per_potential"], 1e-7) for r in rs], "o-",
                   ms=3, label=m)
        rows += [[m, r["params"]["q"], r["threads"], r["metrics"]["ns_per_update"],
                  r["metrics"]["conflicts"], r["metrics"]["conflicts_per_potential"]] for r in rs]
    b.set_yscale("log")
    a.set_xlabel("probability of a potential conflict q (0 drawn at 1e-4)")
    b.set_xlabel("q")
    a.set_ylabel("ns per update")
    b.set_ylabel("actual / potential conflicts")
    a.legend(fontsize=7)
    for ax in (a, b):
        ax.grid(alpha=0.3, which="both")
    threads = max((r["threads"] for r in recs), default=0)
    cap = ctx.caption(fig, recs,
                      "contention microbenchmark on %d threads: time per update and actual per "
                      "potential conflicts against q (feaccel-bench updates --kind contention)"
                      % threads,
                      "16 threads on Rock: locks far slower, CAS fastest except at the highest "
                      "contention where TM levels out; about 1/20 of TM's potential conflicts "
                      "become actual, ≈ 1:1 for locks (no values printed)",
                      note="tsx runs its fallback path here (no RTM): every transaction aborts.")
    ctx.save(fig, f, ["method", "q", "threads", "ns_per_update", "conflicts",
                      "conflicts_per_potential"], rows, cap)


def draw_fem(ctx, fig):
    recs = [r for r in updates(ctx, "fem") if r["params"].get("kind") == "fem"]
    t = {}
    for r in recs:
        p = r["params"]
        t[(p["work_flops"], p["method"], r["threads"])] = r["metrics"]["time_s"] * 1e3
    works = sorted({k[0] for k in t})
    methods = []
    for k in t:
        if k[1] not in methods:
            methods.append(k[1])
    rows = []
    for w in works:
        serial = t.get((w, "serial", 1))
        for m in methods:
            t1, t2 = t.get((w, m, 1)), t.get((w, m, 2))
            pv = TABLE_II.get((w, m), (None, None))
            rows.append([w, m, t1, t2, serial / t2 if serial and t2 else "", pv[0], pv[1],
                         TABLE_II[(w, "serial")][0] / pv[1] if pv[1] else ""])
    header = ["work flops", "method", "ms 1 thr", "ms 2 thr", "speedup vs serial (2 thr)",
              "paper ms 1", "paper ms 2", "paper speedup (2)"]
    cap = ctx.caption(fig, recs,
                      "FE assembly of %d P1 triangles with artificial work per element "
                      "(feaccel-bench updates --kind fem): median times on 1 and 2 threads per update method, including "
                      "private-buffers (row ownership with element recomputation) and "
                      "private-copies (the thesis's per-thread copies reduced at the end)" % (
                          recs[0]["params"].get("elements", 0) if recs else 0),
                      "Rock, 4146 P1 triangles, dense matrix: HTM 10.87/6.18, CAS 9.52/5.20, "
                      "locks 23.20/12.68 ms at 1/2 threads for 1 op (16 threads: speedup vs serial "
                      "2.78/3.33/1.71)")
    ctx.table(fig, header, rows, cap, "FEM assembly with artificial work (Paper I Table II, Fig. 4)",
              width=11)


def draw_nbody(ctx, fig):
    recs = [r for r in updates(ctx, "nbody") if r["params"].get("kind") == "nbody"]
    if not recs:
        raise NoData("no nbody records")
    t = {(r["params"]["method"], r["threads"]): r for r in recs}
    serial = t.get(("serial", 1))
    threads = sorted({r["threads"] for r in recs})
    rows = []
    for m in ["serial"] + list(TABLE_III):
        row = [m]
        for th in threads:
            r = t.get((m, th))
            row += [r["metrics"]["time_s"] if r else "",
                    serial["metrics"]["time_s"] / r["metrics"]["time_s"] if r and serial else ""]
        pv = TABLE_III.get(m, (None, None, None))
        rows.append(row + [pv[0], pv[1], pv[2]])
    header = ["method"]
    for th in threads:
        header += ["s, %d thr" % th, "vs serial, %d thr" % th]
    header += ["paper s, 1 thr", "paper speed-up 2", "paper speed-up 16"]
    tsx = next((r["params"].get("tsx_mode") for r in recs if r["params"].get("tsx_mode")), "rtm")
    cap = ctx.caption(fig, recs,
                      "the all-pairs N-body force loop, %d particles, the last 20 of 40 steps "
                      "timed (feaccel-bench updates --kind nbody): median times and speed-up over "
                      "the unprotected serial loop; every method's forces checked against the "
                      "serial ones; tsx runs its %s path" % (
                          recs[0]["params"].get("particles", 0),
                          "fallback (no RTM on this CPU)" if tsx == "forced-abort" else "RTM"),
                      "Rock, 1024 particles: private buffers fastest (1.24 s on 1 thread, 13.8x "
                      "on 16), blocked transactions 14.1x, blocked locks 15.8x, basic versions "
                      "below 3x the serial loop at 16 threads (speed-ups in the table are over "
                      "the same method on 1 thread)")
    ctx.table(fig, header, rows, cap, "N-body with protected updates (Paper I Table III, "
              "thesis Fig. 3.4)", width=12)


def draw_tx_failures(ctx, fig):
    """Table 3.3 from the TSX records of the other update figures' runs (cached)."""
    kinds = {k: [r for r in updates(ctx, k) if r["params"].get("method") in ("tsx", "tsx-basic",
                                                                              "tsx-blocked")]
             for k in ("overhead", "contention", "fem", "nbody")}
    recs = [r for rs in kinds.values() for r in rs]
    if any(r["params"].get("tsx_mode") == "forced-abort" for r in recs):
        raise NoData("Table 3.3 needs Intel RTM: this CPU ran TSX's fallback path (every "
                     "transaction aborts by design), so there are no transaction failures to count")

    def pick_rec(kind, **params):
        for r in kinds[kind]:
            if all(str(r["params"].get(k)) == str(v) for k, v in params.items()):
                return r
        return None

    want = [("overhead, 1 double", pick_rec("overhead", doubles_per_update=1)),
            ("overhead, 8 doubles", pick_rec("overhead", doubles_per_update=8)),
            ("contention, q = 1", pick_rec("contention", q="1")),
            ("contention, q = 0.001", pick_rec("contention", q="0.001")),
            ("FEM, 1 flop", pick_rec("fem", work_flops=1)),
            ("FEM, 1000 flops", pick_rec("fem", work_flops=1000)),
            ("N-body", pick_rec("nbody", method="tsx-blocked"))]
    paper = {row[0]: row[1:] for row in TABLE_33}
    rows = []
    for name, r in want:
        pv = paper[name]
        if r is None:
            rows.append([name, "", "", "", ""] + list(pv))
            continue
        m = r["metrics"]
        aborts = m["tx_started"] - m["tx_committed"]
        updates_ = m["tx_committed"] + m["tx_fallback"]
        share = (lambda k: 100.0 * m[k] / aborts if aborts else 0.0)
        rows.append([name, 100.0 * aborts / updates_ if updates_ else 0.0,
                     share("tx_aborts_conflict"), share("tx_aborts_capacity"),
                     share("tx_aborts_other")] + list(pv))
    header = ["experiment", "failed % of updates", "conflict %", "capacity %", "other %",
              "paper failed %", "paper conflict %", "paper load %", "paper store %"]
    cap = ctx.caption(fig, recs,
                      "failed transactions per protected update and their causes, from the TSX "
                      "rows of feaccel-bench updates (overhead, contention, fem, nbody); x86 RTM "
                      "reports conflict and capacity aborts where Rock reported load and store "
                      "misses, so only the conflict column compares directly",
                      "Rock: FEM 18.8 / 19.2 % failed, 95.6 / 96.7 % of them load misses; N-body "
                      "0.4 %, 51.9 % conflicts; microbenchmarks below 0.001 % except contention "
                      "at q = 1 (13.2 %)")
    ctx.table(fig, header, rows, cap, "Failed transactions by cause (thesis Table 3.3)", width=12)


def draw_assembly(ctx, fig):
    if ctx.mode == "smoke":
        recs = ctx.run(["assembly", "--dim", 2, "--n", 40], reps=1)
    elif ctx.mode == "full":
        recs = ctx.run(["assembly"], reps=5)
    else:  # the case's two standard meshes, smaller: 2D Q1 n = 700 and 3D Q2 n = 24 take a minute
        recs = ctx.run(["assembly", "--dim", 2, "--p", 1, "--n", 400], reps=3) + \
            ctx.run(["assembly", "--dim", 3, "--p", 2, "--n", 16], reps=3)
    recs = [r for r in recs if "strategy" in r["params"]]
    meshes = []
    for r in recs:
        key = (r["params"]["dim"], r["params"]["p"], r["params"]["n"])
        if key not in meshes:
            meshes.append(key)
    f, axes = new_fig(5.2 * len(meshes) + 0.5, 4.4, ncols=len(meshes))
    rows = []
    for ax, (d, p, n) in zip(axes, meshes):
        rs = [r for r in recs if (r["params"]["dim"], r["params"]["p"], r["params"]["n"]) == (d, p, n)]
        strategies = []
        for r in rs:
            s = r["params"]["strategy"]
            if s not in strategies:
                strategies.append(s)
        threads = sorted({r["threads"] for r in rs})
        w = 0.8 / len(threads)
        for j, th in enumerate(threads):
            ys = []
            for s in strategies:
                r = next((r for r in rs if r["params"]["strategy"] == s and r["threads"] == th), None)
                ys.append(r["metrics"]["time_s"] * 1e3 if r else 0)
                if r:
                    rows.append([d, p, n, s, r["params"].get("ran", s), th,
                                 r["metrics"]["time_s"], r["metrics"]["speedup"]])
            ax.bar([i + j * w for i in range(len(strategies))], ys, w, label="%d thread%s" % (
                th, "s" if th > 1 else ""))
        ax.set_xticks([i + 0.4 - w / 2 for i in range(len(strategies))])
        ax.set_xticklabels(strategies, rotation=35, ha="right", fontsize=7)
        ax.set_ylabel("assembly time [ms]")
        ax.set_title("%dD Q%d, n=%d" % (d, p, n), fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, axis="y")
    skipped = sorted({r["backend"].split(" ")[0] for r in recs if not r["metrics"]})
    cap = ctx.caption(fig, recs,
                      "concurrent CSR assembly per update strategy and thread count "
                      "(feaccel-bench assembly): private-buffers is row ownership with element "
                      "recomputation, private-copies the thesis's per-thread copies + reduction",
                      "Rock, dense storage: CAS fastest for the memory-bound assembly (3.3× at 16 "
                      "threads), TM for the compute-heavy one, locks slowest",
                      note=("Not run here: %s (no RTM)." % ", ".join(skipped)) if skipped else None)
    f.subplots_adjust(bottom=0.3)
    ctx.save(fig, f, ["dim", "p", "n", "strategy", "ran", "threads", "time_s", "speedup"], rows, cap)


# ------------------------------------------------------------------ operators
class OpSource:
    def __init__(self, machine=None):
        self.machine = machine

    def recs(self, ctx):
        """{dofs bucket: [records]} (CPU: one sweep per size; GPU: the file's records)."""
        if self.machine is None:
            return operator_sweeps(ctx)
        recs = [r for r in ctx.gpu("operator").get(self.machine, []) if r["params"].get("kind")]
        if not recs:
            raise NoData("no operator records from %s" % self.machine)
        return {"all": recs}

    def who(self):
        return "GPU (%s)" % self.machine if self.machine else "CPU"

    def caption(self, ctx, fig, recs, what, pv, note=None):
        return ctx.caption(fig, recs, what, pv, gpu_machine=self.machine, note=note)


def flat(d):
    return [r for v in d.values() for r in v]


def draw_setup(src):
    def draw(ctx, fig):
        recs = flat(src.recs(ctx))
        # the largest size of each (dim, p)
        best = {}
        for r in recs:
            p = r["params"]
            if p["kind"] not in ("csr", "matfree-elemmat") or p.get("strategy") == "coloring" and \
                    src.machine is None:
                continue
            k = (p["dim"], p["p"], p["kind"])
            if k not in best or p["dofs"] > best[k]["params"]["dofs"]:
                best[k] = r
        rows = []
        for (d, p) in sorted({(k[0], k[1]) for k in best}):
            c, e = best.get((d, p, "csr")), best.get((d, p, "matfree-elemmat"))
            pv = TABLE_35.get((d, p), (None,) * 4)
            cs = c["metrics"]["setup_s"] if c else None
            es = e["metrics"]["setup_s"] if e else None
            rows.append([d, p, (c or e)["params"]["dofs"], cs, es, cs / es if cs and es else "",
                         pv[2] if src.machine else pv[0], pv[3] if src.machine else pv[1]])
        who = "GPU_SpM / GPU_Color" if src.machine else "SpM / Color"
        header = ["dim", "p", "DoFs", "CSR setup s", "element-matrix setup s", "ratio",
                  "paper %s" % who.split(" / ")[0], "paper %s" % who.split(" / ")[1]]
        cap = src.caption(ctx, fig, recs,
                          "operator setup time: assembled CSR against the matrix-free element-"
                          "matrix operator at the largest size run",
                          "4.1M DoFs 2D / 6.6M 3D on Xeon E5-2680 + K20c: %s 2D p=1 %s s, 3D p=4 "
                          "%s s; matrix-free setup falls with p" % (
                              who, "7.9 / 0.4" if src.machine else "6.2 / 0.33",
                              "– / 0.1" if src.machine else "66 / 0.075"))
        ctx.table(fig, header, rows, cap, "Setup time (thesis Table 3.5), %s" % src.who(), width=10)
    return draw


def draw_local_matrix(ctx, fig):
    recs = flat(operator_sweeps(ctx))
    size = {}
    for r in recs:
        p = r["params"]
        if p["kind"] == "matfree-elemmat":
            m = re.search(r"one (\d+)x(\d+) matrix", p.get("kernel", ""))
            if m:
                size[(p["dim"], p["p"])] = int(m.group(1)) * int(m.group(2))
    rows = []
    for d in (2, 3):
        rows.append(["%dD" % d] + [size.get((d, p), "") for p in (1, 2, 3, 4)] +
                    [(p + 1) ** (2 * d) for p in (1, 2, 3, 4)])
    for (d, p), v in size.items():
        ctx.check(v == (p + 1) ** (2 * d), fig, "%dD p=%d element matrix has %d entries, not "
                  "(p+1)^(2d) = %d" % (d, p, v, (p + 1) ** (2 * d)))
    header = ["dim", "ours p=1", "p=2", "p=3", "p=4", "paper p=1", "p=2", "p=3", "p=4"]
    cap = ctx.caption(fig, recs,
                      "entries of the element matrix the matrix-free operator stores (from the "
                      "operator records' kernel names)",
                      "(p+1)^(2d): 2D 16 / 81 / 256 / 625, 3D 64 / 729 / 4096 / 15625")
    ctx.table(fig, header, rows, cap, "Local matrix size in doubles (thesis Table 3.6)")


def draw_rates(src):
    """Figs. 3.6/3.7: DoF/s per p and operator kind at the largest size, 2D and 3D."""
    def draw(ctx, fig):
        recs = flat(src.recs(ctx))
        f, axes = new_fig(11, 4.4, ncols=2)
        rows = []
        for ax, d in zip(axes, (2, 3)):
            rs = [r for r in recs if r["params"]["dim"] == d and r["metrics"].get("dofs_per_s")]
            # at about 1M DoFs on the GPU (the sweep size), the largest sweep on the CPU
            target = max(r["params"]["dofs"] for r in rs) if src.machine is None else 1.0e6
            variants = []
            for r in rs:
                v = (r["params"]["kind"], r["params"].get("ran") if src.machine else "")
                if v not in variants:
                    variants.append(v)
            w = 0.8 / max(1, len(variants))
            for j, v in enumerate(variants):
                ys = []
                for p in (1, 2, 3, 4):
                    cand = [r for r in rs if (r["params"]["kind"], r["params"].get("ran") if
                                              src.machine else "") == v and r["params"]["p"] == p]
                    if src.machine is None:
                        cand = [r for r in cand if r["params"]["dofs"] >= 0.5 * target]
                    r = min(cand, key=lambda r: abs(r["params"]["dofs"] - target), default=None)
                    ys.append(r["metrics"]["dofs_per_s"] / 1e6 if r else 0)
                    if r:
                        rows.append([d, p, v[0], v[1] or r["params"].get("ran"), r["params"]["dofs"],
                                     r["metrics"]["dofs_per_s"], r["metrics"].get("gflops")])
                lab = KIND[v[0]] + (" (%s)" % v[1] if v[1] and v[0] != "csr" else "")
                ax.bar([i + j * w for i in range(4)], ys, w, label=lab)
            ax.set_xticks([i + 0.4 - w / 2 for i in range(4)])
            ax.set_xticklabels(["p=%d" % p for p in (1, 2, 3, 4)])
            ax.set_ylabel("MDoF/s (operator applications)")
            ax.set_title("%dD, %s, ≈%.2gM DoFs" % (d, src.who(), target / 1e6), fontsize=9)
            ax.legend(fontsize=6.5)
            ax.grid(alpha=0.3, axis="y")
        cap = src.caption(ctx, fig, recs,
                          "operator throughput per degree and kind: CSR SpMV, the element-matrix "
                          "and the sum-factorization matrix-free operators",
                          "K20c matrix-free 5.4–10× (2D) and 4.5–10× (3D) the fastest CPU version; "
                          "matrix-free beats CSR for p > 1; 3D drops at p = 3, 4 (the element "
                          "matrix leaves the 32 kB L1); no bar values printed")
        ctx.save(fig, f, ["dim", "p", "kind", "ran", "dofs", "dofs_per_s", "gflops"], rows, cap)
    return draw


def draw_rate_vs_dofs(src):
    """Figs. 3.8/3.9: rate against the number of DoFs."""
    def draw(ctx, fig):
        recs = flat(src.recs(ctx))
        f, axes = new_fig(11, 4.4, ncols=2)
        rows = []
        for ax, d in zip(axes, (2, 3)):
            lines = {}
            for r in recs:
                p = r["params"]
                if p["dim"] != d or not r["metrics"].get("dofs_per_s"):
                    continue
                key = (p["kind"], p["p"], p.get("ran") if src.machine and p["kind"] != "csr" else "")
                lines.setdefault(key, []).append(r)
            for key, rs in sorted(lines.items()):
                rs.sort(key=lambda r: r["params"]["dofs"])
                style = {"csr": "s:", "matfree-elemmat": "o--", "matfree-sumfact": "^-"}[key[0]]
                ax.loglog([r["params"]["dofs"] for r in rs],
                          [r["metrics"]["dofs_per_s"] for r in rs], style, ms=3,
                          label="%s p=%d%s" % (KIND[key[0]], key[1], " " + key[2] if key[2] else ""))
                rows += [[d, key[0], key[1], key[2], r["params"]["dofs"], r["metrics"]["dofs_per_s"]]
                         for r in rs]
            ax.set_xlabel("DoFs")
            ax.set_ylabel("DoF/s")
            ax.set_title("%dD, %s" % (d, src.who()), fontsize=9)
            ax.grid(alpha=0.3, which="both")
            ax.legend(fontsize=5, ncol=2)
        cap = src.caption(ctx, fig, recs, "operator throughput against problem size",
                          "K20c: matrix-free flat for small problems, rising fast once the GPU is "
                          "filled (the knee moves right with element complexity); CSR saturates "
                          "earlier")
        ctx.save(fig, f, ["dim", "kind", "p", "ran", "dofs", "dofs_per_s"], rows, cap)
    return draw


def draw_intensity(ctx, fig):
    recs = flat(operator_sweeps(ctx))
    big = max(r["params"]["dofs"] for r in recs)
    rs = [r for r in recs if r["params"]["dofs"] >= 0.5 * big and r["metrics"].get("bytes_per_dof")]
    f, axes = new_fig(11, 4.2, ncols=2)
    rows = []
    for ax, d in zip(axes, (2, 3)):
        for kind in KIND:
            pts = sorted(((r["params"]["p"], r["metrics"]["flops_per_dof"] / r["metrics"]["bytes_per_dof"],
                           r["metrics"]["bytes_per_dof"] * r["params"]["dofs"])
                          for r in rs if r["params"]["dim"] == d and r["params"]["kind"] == kind))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, label=KIND[kind])
            rows += [[d, kind, p[0], p[1], p[2]] for p in pts]
        ax.set_xlabel("degree p")
        ax.set_ylabel("flop / byte")
        ax.set_yscale("log")
        ax.set_title("%dD computational intensity" % d, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    cap = ctx.caption(fig, rs,
                      "computational intensity (counted flops per byte moved, per operator "
                      "application) of CSR SpMV, the element-matrix and the sum-factorization "
                      "operators against p",
                      "SpMV ≈ 0.2 flop/byte; the local-matrix and tensor-product operators far "
                      "higher (thesis Fig. 2.3; no other values recoverable)")
    ctx.save(fig, f, ["dim", "kind", "p", "flops_per_byte", "bytes_per_apply"], rows, cap)


def draw_limits(ctx, fig):
    recs = [r for r in ctx.run(["limits"], reps=pick(ctx.mode, 3, 5, 1)) if r["metrics"]]
    rows = []
    srcs = [("this machine", recs)]
    for m in gpu_machines():
        try:
            srcs.append((m, ctx.gpu("limits")[m]))
        except (NoData, KeyError):
            pass
    for name, rs in srcs:
        for r in rs:
            k = r["params"].get("kernel")
            v = r["metrics"].get("gflops") or r["metrics"].get("gbytes_per_s") or \
                r["metrics"].get("axpy_gbytes_per_s")
            unit = "GFLOP/s" if "gflops" in r["metrics"] else "GB/s"
            rows.append([name, r["backend"], r["machine"].get("gpu") or r["machine"].get("cpu_model"),
                         r["threads"], k, v, unit])
    header = ["source", "backend", "device", "threads", "kernel", "rate", "unit"]
    cap = ctx.caption(fig, recs,
                      "measured DGEMM/SGEMM rates and memory bandwidth (feaccel-bench limits), "
                      "this machine and the GPU machines on record, beside the thesis's table of "
                      "peak figures",
                      "Table 3.4 lists vendor peaks of 2014 processors, e.g. Xeon E5-2699v3 662 "
                      "GFLOP/s DP, 68 GB/s; Tesla K40 1429 GFLOP/s, 288 GB/s")
    ctx.table(fig, header, rows, cap, "Measured peaks (cf. thesis Table 3.4)", width=11)


def draw_atomic_vs_coloring(machine):
    def draw(ctx, fig):
        recs = [r for r in ctx.gpu("operator").get(machine, []) if r["params"].get("kind", "").startswith("matfree")]
        pairs = {}
        for r in recs:
            p = r["params"]
            pairs.setdefault((p["dim"], p["p"], p["kind"], p["dofs"]), {})[p.get("ran")] = r
        rows = []
        for k, v in sorted(pairs.items()):
            if "atomic-cas" in v and "coloring" in v:
                ta, tc = v["atomic-cas"]["metrics"]["time_s"], v["coloring"]["metrics"]["time_s"]
                rows.append([k[0], k[1], KIND[k[2]], k[3], ta, tc, tc / ta])
        if not rows:
            raise NoData("no atomic/coloring pairs from %s" % machine)
        header = ["dim", "p", "operator", "DoFs", "atomics s", "coloring s", "coloring / atomics"]
        cap = ctx.caption(fig, recs,
                          "time per operator application with atomic scatter against mesh "
                          "coloring (2^d colors), same problem",
                          "K20c: both slight overhead against GPU_Max; 2D coloring cheaper except "
                          "p = 1; 3D p = 3, 4 atomics negligible", gpu_machine=machine)
        ctx.table(fig, header, rows, cap, "Atomics against coloring on the GPU (%s)" % machine,
                  width=10)
    return draw


def draw_largest(machine):
    def draw(ctx, fig):
        recs = [r for r in ctx.gpu("operator").get(machine, []) if r["params"].get("dofs", 0) > 5e6]
        if not recs:
            raise NoData("no large operator records from %s" % machine)
        rows = [[r["params"]["dim"], r["params"]["p"], KIND[r["params"]["kind"]], r["params"].get("ran"),
                 r["params"]["dofs"], r["metrics"].get("dofs_per_s"), r["metrics"].get("gflops"),
                 r["metrics"].get("memory_bytes")]
                for r in sorted(recs, key=lambda r: (r["params"]["dim"], r["params"]["p"],
                                                     r["params"]["dofs"]))]
        header = ["dim", "p", "operator", "ran", "DoFs", "DoF/s", "GFLOP/s", "memory bytes"]
        cap = ctx.caption(fig, recs, "the thesis's largest problems, matrix-free on the GPU",
                          "K20c (5 GB): 26.2M DoFs 2D for p = 1, 2, 4 and 14.8M for p = 3; 33.1M "
                          "3D for p = 1, 2, 4 and 14.0M for p = 3; rates not printed",
                          gpu_machine=machine)
        ctx.table(fig, header, rows, cap, "Largest sizes (thesis Figs. 3.6/3.7), %s" % machine,
                  width=11)
    return draw


def _figures():
    figs = [Figure("th-table1-update-overhead", "th", "Paper I Table I / thesis Fig. 3.1", draw_overhead),
            Figure("th-fig2-3-contention", "th", "Paper I Figs. 2–3 / thesis Fig. 3.2", draw_contention),
            Figure("th-table2-fem-assembly", "th", "Paper I Table II / Fig. 4 / thesis Fig. 3.3", draw_fem),
            Figure("th-table3-nbody", "th", "Paper I Table III / thesis Fig. 3.4", draw_nbody),
            Figure("th-table33-tx-failures", "th", "thesis Table 3.3", draw_tx_failures),
            Figure("th-assembly-strategies", "th", "Ch. 3 (Table II's methods, CSR assembly)",
                   draw_assembly),
            Figure("th-table34-measured-peaks", "th", "thesis Table 3.4", draw_limits),
            Figure("th-table35-setup", "th", "thesis Table 3.5", draw_setup(OpSource())),
            Figure("th-table36-local-matrix", "th", "thesis Table 3.6", draw_local_matrix),
            Figure("th-fig23-intensity", "th", "thesis Fig. 2.3", draw_intensity),
            Figure("th-fig36-37-operator-rates", "th", "thesis Figs. 3.6–3.7 / Paper II Fig. 4",
                   draw_rates(OpSource())),
            Figure("th-fig38-39-rate-vs-dofs", "th", "thesis Figs. 3.8–3.9 / Paper II Figs. 2–3",
                   draw_rate_vs_dofs(OpSource()))]
    for m in dict.fromkeys(gpu_machines()):
        src = OpSource(m)
        figs += [
            Figure("th-table35-setup-" + m, "th", "thesis Table 3.5", draw_setup(src), True),
            Figure("th-fig36-37-operator-rates-" + m, "th", "thesis Figs. 3.6–3.7 / Paper II Fig. 4",
                   draw_rates(src), True),
            Figure("th-fig38-39-rate-vs-dofs-" + m, "th", "thesis Figs. 3.8–3.9 / Paper II Figs. 2–3",
                   draw_rate_vs_dofs(src), True),
            Figure("th-fig36-37-atomic-vs-coloring-" + m, "th", "thesis Figs. 3.6–3.7 (atomics vs "
                   "coloring)", draw_atomic_vs_coloring(m), True),
            Figure("th-fig36-37-largest-" + m, "th", "thesis Figs. 3.6–3.7 (largest sizes)",
                   draw_largest(m), True)]
    return figs


FIGURES = _figures()
