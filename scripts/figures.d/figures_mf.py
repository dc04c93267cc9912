"""The IGA multifrontal paper's figures and tables (Woźniak et al. 2014): the 1D and 2D
timing sweeps against CHOLMOD (the paper's MUMPS), memory, GFLOP/s, the phase split,
the fitted exponents, time / p^2, the strong-scaling model and the front sizes; on this
CPU (feaccel-bench iga-direct) and from the GPU records on file."""
import glob
import os

from figlib import Figure, NoData, loglog_slope, new_fig, pick

P1D = (1, 2, 3, 4, 5)
P2D = (1, 2, 3)
PAPER_EXP = {1: (0.9515, 1.3504), 2: (1.0746, 1.478), 3: (1.0490, 1.471)}
PAPER_MAX = {1: "2,128,681", 2: "797,449", 3: "408,321"}


def GEMM_N(ctx):
    """Order of the DGEMM yardstick: only the peak fractions use it, which no figure draws."""
    return pick(ctx.mode, 1024, 2048, 256)


def sweep_1d(ctx, p):
    n_max = pick(ctx.mode, 65536, 1048576, 1024)
    n_min = pick(ctx.mode, 256, 1024, 64)
    return ctx.run(["iga-direct", "--dim", 1, "--p", p, "--sweep", "--n-min", n_min, "--n", n_max,
                    "--gemm-n", GEMM_N(ctx)], reps=pick(ctx.mode, 3, 3, 1))


def sweep_2d(ctx, p):
    n_max = pick(ctx.mode, {1: 512, 2: 384, 3: 256}[p], {1: 2048, 2: 1024, 3: 768}[p], 32)
    return ctx.run(["iga-direct", "--dim", 2, "--p", p, "--sweep", "--n-min", 16, "--n", n_max,
                    "--gemm-n", GEMM_N(ctx)], reps=1)


def ps_1d(ctx):
    return P1D if ctx.mode != "smoke" else (1, 3)


def ps_2d(ctx):
    return P2D if ctx.mode != "smoke" else (1, 2)


def points(recs):
    """Size records (not the fit, not --levels) sorted by N."""
    pts = [r for r in recs if "dofs" in r["params"] and "level" not in r["params"]]
    return sorted(pts, key=lambda r: r["params"]["dofs"])


def total(r):
    return r["metrics"]["setup_s"] + r["metrics"]["solve_s"]


def cholmod_total(r):
    c = r.get("peers", {}).get("cholmod")
    if not c:
        return float("nan")
    return c["analyze_s"] + c["factor_s"] + c["solve_s"]


def fit_of(recs):
    return next((r for r in recs if "fit" in r["params"]), None)


# ------------------------------------------------------------------ sources
class Source:
    """Where the sweep records come from: this CPU (runs the bench) or a GPU machine's file."""

    def __init__(self, machine=None):
        self.machine = machine

    def sweeps(self, ctx, dim):
        if self.machine is None:
            ps = ps_1d(ctx) if dim == 1 else ps_2d(ctx)
            return {p: (sweep_1d(ctx, p) if dim == 1 else sweep_2d(ctx, p)) for p in ps}
        recs = ctx.gpu("iga-direct").get(self.machine)
        if not recs:
            raise NoData("no iga-direct records from %s" % self.machine)
        out = {}
        for r in recs:
            if r["params"].get("dim") == dim and r["backend"].startswith("/gpu"):
                out.setdefault(r["params"]["p"], []).append(r)
        if not out:
            raise NoData("no %dD sweep from %s" % (dim, self.machine))
        return dict(sorted(out.items()))

    def caption(self, ctx, fig, recs, what, paper_value=None, note=None):
        return ctx.caption(fig, recs, what, paper_value, gpu_machine=self.machine, note=note)

    def who(self):
        return "GPU (%s)" % self.machine if self.machine else "feaccel (CPU)"


def all_recs(sw):
    return [r for v in sw.values() for r in v]


# ------------------------------------------------------------------ drawers
def draw_fig3(src):
    def draw(ctx, fig):
        sw = src.sweeps(ctx, 1)
        f, (a, b) = new_fig(10, 4.6, ncols=2)
        rows = []
        for p, recs in sw.items():
            pts = points(recs)
            N = [r["params"]["dofs"] for r in pts]
            a.plot(N, [total(r) for r in pts], "o-", ms=3, label="p=%d" % p)
            b.plot(N, [r["metrics"]["factor_bytes"] / p / 2**20 for r in pts], "o-", ms=3,
                   label="p=%d" % p)
            rows += [[p, r["params"]["dofs"], total(r), r["metrics"]["factor_bytes"],
                      r["metrics"]["factor_bytes"] / p] for r in pts]
        a.set_xscale("log")
        a.set_xlabel("N (unknowns)")
        a.set_ylabel("time: setup + solve [s]")
        a.set_title("1D time vs log N, %s" % src.who(), fontsize=9)
        b.set_xlabel("N")
        b.set_ylabel("factor memory / p [MiB]")
        b.set_title("1D memory / p (linear axes)", fontsize=9)
        for ax in (a, b):
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
        cap = src.caption(ctx, fig, all_recs(sw),
                          "1D time (log N axis) and factor memory / p against N",
                          "time a straight line in log N with slope ∝ p² on the GTX 560 Ti "
                          "(parallel regime); memory/p linear in N, curves coinciding; no values "
                          "printed",
                          note=None if src.machine else
                          "On 2 cores the solver is in the sequential regime: time grows like N, "
                          "not log N.")
        ctx.save(fig, f, ["p", "N", "time_s", "factor_bytes", "factor_bytes_per_p"], rows, cap)
    return draw


def draw_vs_cholmod(src, dim):
    def draw(ctx, fig):
        sw = src.sweeps(ctx, dim)
        if dim == 1:
            sw = {p: v for p, v in sw.items() if p <= 4}
        n = len(sw)
        f, axes = new_fig(3.2 * n + 0.8, 4.2, ncols=n)
        rows = []
        for ax, (p, recs) in zip(axes, sw.items()):
            pts = points(recs)
            N = [r["params"]["dofs"] for r in pts]
            ours = [total(r) for r in pts]
            theirs = [cholmod_total(r) for r in pts]
            ax.plot(N, ours, "o-", ms=3, label=src.who())
            ax.plot(N, theirs, "s--", ms=3, label="CHOLMOD")
            ax.set_xscale("log")
            if dim == 2:
                ax.set_yscale("log")
            ax.set_title("%dD p=%d" % (dim, p), fontsize=9)
            ax.set_xlabel("N")
            ax.grid(alpha=0.3)
            rows += [[p, a, b, c, b / c if c == c and c > 0 else ""] for a, b, c in zip(N, ours, theirs)]
        axes[0].set_ylabel("time [s]")
        axes[0].legend(fontsize=7)
        if dim == 1:
            what = "1D total time against N, ours and CHOLMOD (the paper's sequential MUMPS)"
            pv = "GPU a straight line O(log N), MUMPS O(N p²) growing fast; no values printed"
        else:
            what = "2D total time against N, ours and CHOLMOD (the paper's MUMPS), log-log"
            pv = "largest sizes on a 3 GB GTX 780: %s" % " / ".join(
                "p=%d %s" % (p, PAPER_MAX[p]) for p in P2D)
        cap = src.caption(ctx, fig, all_recs(sw), what, pv,
                          note="CHOLMOD: supernodal on the same reduced matrix, %s." % (
                              "16 host cores" if src.machine else "the same 2 cores"))
        ctx.save(fig, f, ["p", "N", "ours_s", "cholmod_s", "ratio"], rows, cap)
    return draw


def draw_2d_time(src):
    """Figs. 12-15: 2D time with O(N) and O(N^1.5) lines fitted at the small end; memory/p^2."""
    def draw(ctx, fig):
        sw = src.sweeps(ctx, 2)
        f, (a, b) = new_fig(10, 4.6, ncols=2)
        rows = []
        for p, recs in sw.items():
            pts = points(recs)
            N = [r["params"]["dofs"] for r in pts]
            T = [total(r) for r in pts]
            ln, = a.loglog(N, T, "o-", ms=3, label="p=%d (slope %.2f)" % (p, loglog_slope(N, T)))
            if len(N) >= 2:
                # the estimates through the largest point, as the paper's lines
                a.loglog(N, [T[-1] * (x / N[-1]) for x in N], ":", color=ln.get_color(), lw=0.8)
                a.loglog(N, [T[-1] * (x / N[-1]) ** 1.5 for x in N], "--", color=ln.get_color(),
                         lw=0.8)
            b.loglog(N, [r["metrics"]["factor_bytes"] / p**2 for r in pts], "o-", ms=3,
                     label="p=%d" % p)
            rows += [[p, r["params"]["dofs"], total(r), r["metrics"]["factor_bytes"] / p**2]
                     for r in pts]
        a.set_xlabel("N")
        a.set_ylabel("time [s]  (dotted O(N), dashed O(N^1.5))")
        a.set_title("2D time, %s" % src.who(), fontsize=9)
        b.set_xlabel("N")
        b.set_ylabel("factor bytes / p²")
        b.set_title("2D memory / p²", fontsize=9)
        for ax in (a, b):
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3, which="both")
        cap = src.caption(ctx, fig, all_recs(sw),
                          "2D time against N with O(N) and O(N^1.5) lines, and memory / p²",
                          "Tesla C2070 (448 cores): slope 1 for small N drifting to 1.5 for large "
                          "N; memory/p² slope 1 with the curves coinciding")
        ctx.save(fig, f, ["p", "N", "time_s", "factor_bytes_per_p2"], rows, cap)
    return draw


def draw_metric(src, key, ylabel, what, paper_value, scale=1.0, loglog=True, peer=None):
    def draw(ctx, fig):
        sw = src.sweeps(ctx, 2)
        f, (a,) = new_fig(6.5, 4.4)
        rows = []
        for p, recs in sw.items():
            pts = points(recs)
            N = [r["params"]["dofs"] for r in pts]
            y = [r["metrics"].get(key, float("nan")) * scale for r in pts]
            ln, = a.plot(N, y, "o-", ms=3, label="%s p=%d" % (src.who(), p))
            row_peer = [None] * len(pts)
            if peer:
                yp = [r.get("peers", {}).get("cholmod", {}).get(peer, float("nan")) * scale
                      for r in pts]
                a.plot(N, yp, "s--", ms=3, color=ln.get_color(), alpha=0.7,
                       label="CHOLMOD p=%d" % p)
                row_peer = yp
            rows += [[p, n, v, w] for n, v, w in zip(N, y, row_peer)]
        a.set_xscale("log")
        if loglog:
            a.set_yscale("log")
        a.set_xlabel("N")
        a.set_ylabel(ylabel)
        a.legend(fontsize=7)
        a.grid(alpha=0.3, which="both")
        a.set_title(what, fontsize=9)
        cap = src.caption(ctx, fig, all_recs(sw), what, paper_value)
        ctx.save(fig, f, ["p", "N", key, "cholmod_" + (peer or "")], rows, cap)
    return draw


def draw_phases(src):
    def draw(ctx, fig):
        sw = src.sweeps(ctx, 2)
        n = len(sw)
        f, axes = new_fig(3.3 * n + 0.8, 4.2, ncols=n)
        rows = []
        keys = [("integrate_s", "integration"), ("upper_s", "factorization (levels ≥ 1)"),
                ("root_s", "root solve"), ("solve_s", "forward + backward substitution")]
        for ax, (p, recs) in zip(axes, sw.items()):
            pts = points(recs)
            N = [r["params"]["dofs"] for r in pts]
            for k, lab in keys:
                ax.loglog(N, [max(r["metrics"].get(k, 0), 1e-7) for r in pts], "o-", ms=3,
                          label=lab)
            ax.set_title("2D p=%d, %s" % (p, src.who()), fontsize=9)
            ax.set_xlabel("N")
            ax.grid(alpha=0.3, which="both")
            rows += [[p, r["params"]["dofs"]] + [r["metrics"].get(k, "") for k, _ in keys]
                     for r in pts]
        axes[0].set_ylabel("time [s]")
        axes[0].legend(fontsize=6.5)
        cap = src.caption(ctx, fig, all_recs(sw),
                          "time per phase against N (integration, factorization, root, "
                          "substitution)",
                          "factorization dominates at large N; the MAGMA root solve has a large "
                          "constant and dominates small N")
        ctx.save(fig, f, ["p", "N"] + [k for k, _ in keys], rows, cap)
    return draw


def draw_exponents(src):
    def draw(ctx, fig):
        sw = src.sweeps(ctx, 2)
        rows = []
        for p, recs in sw.items():
            pts = points(recs)
            # the paper skips the small sizes where the root dominates: the upper half
            half = pts[len(pts) // 2 - (1 if len(pts) % 2 == 0 else 0):] if len(pts) > 3 else pts
            N = [r["params"]["dofs"] for r in half]
            e_ours = loglog_slope(N, [total(r) for r in half])
            e_chol = loglog_slope(N, [cholmod_total(r) for r in half])
            ft = fit_of(recs)
            e_all = ft["metrics"]["time_exponent"] if ft else loglog_slope(
                [r["params"]["dofs"] for r in pts], [total(r) for r in pts])
            pe = PAPER_EXP.get(p, (None, None))
            rows.append([p, "%d–%d" % (N[0], N[-1]) if N else "", round(e_ours, 3),
                         round(e_all, 3), round(e_chol, 3), pe[0], pe[1]])
        header = ["p", "N range (upper half)", "ours", "ours (all sizes)", "CHOLMOD",
                  "paper GPU", "paper MUMPS"]
        cap = src.caption(ctx, fig, all_recs(sw),
                          "fitted exponents e of time ~ N^e, 2D (least squares in log-log over "
                          "the upper half of the sizes)",
                          "GTX 780 0.9515 / 1.0746 / 1.0490, MUMPS 1.3504 / 1.478 / 1.471 for "
                          "p = 1 / 2 / 3 (theory 1 and 1.5)")
        ctx.table(fig, header, rows, cap, "2D time exponents, %s" % src.who())
    return draw


def draw_time_p2(src):
    def draw(ctx, fig):
        sw = src.sweeps(ctx, 2)
        f, (a,) = new_fig(6.5, 4.4)
        rows = []
        for p, recs in sw.items():
            pts = points(recs)
            N = [r["params"]["dofs"] for r in pts]
            a.loglog(N, [total(r) / p**2 for r in pts], "o-", ms=3, label="p=%d" % p)
            rows += [[p, r["params"]["dofs"], total(r) / p**2] for r in pts]
        a.set_xlabel("N")
        a.set_ylabel("time / p² [s]")
        a.legend(fontsize=7)
        a.grid(alpha=0.3, which="both")
        a.set_title("2D time / p², %s" % src.who(), fontsize=9)
        cap = src.caption(ctx, fig, all_recs(sw), "2D time / p² against N",
                          "the GTX 780 curves for p = 1, 2, 3 coincide (the p² dependence of the "
                          "parallel cost)")
        ctx.save(fig, f, ["p", "N", "time_over_p2_s"], rows, cap)
    return draw


def draw_strong_scaling(ctx, fig):
    ps = (1, 2, 3, 4) if ctx.mode != "smoke" else (1, 2)
    data = {p: [r for r in ctx.run(["iga-direct", "--cost", "--dim", 1, "--p", p, "--n", 2048])
                if r["params"].get("nproc", 0) > 0] for p in ps}
    f, axes = new_fig(12, 4.2, ncols=3)
    rows = []
    for p, recs in data.items():
        P = [r["params"]["nproc"] for r in recs]
        m = [r["metrics"] for r in recs]
        ln, = axes[0].loglog(P, [x["paper_critical_path_flops"] for x in m], "o-", ms=3,
                             label="p=%d paper eq. 23" % p)
        axes[0].loglog(P, [x["exact_critical_path_flops"] for x in m], "--", color=ln.get_color(),
                       lw=0.9, label="p=%d exact tree" % p)
        axes[1].loglog(P, [x["paper_speedup"] for x in m], "o-", ms=3, color=ln.get_color())
        axes[1].loglog(P, [x["exact_speedup"] for x in m], "--", color=ln.get_color(), lw=0.9)
        axes[2].semilogx(P, [x["paper_efficiency"] for x in m], "o-", ms=3, color=ln.get_color())
        axes[2].semilogx(P, [x["exact_efficiency"] for x in m], "--", color=ln.get_color(), lw=0.9)
        rows += [[p, r["params"]["nproc"], x["paper_critical_path_flops"], x["paper_speedup"],
                  x["paper_efficiency"], x["exact_critical_path_flops"], x["exact_speedup"],
                  x["exact_efficiency"]] for r, x in zip(recs, m)]
    axes[0].set_ylabel("critical-path FLOPs (Fig. 9)")
    axes[1].set_ylabel("speedup T1/TP (Fig. 10)")
    axes[2].set_ylabel("efficiency T1/(P TP) (Fig. 11)")
    for ax in axes:
        ax.set_xlabel("processors P")
        ax.grid(alpha=0.3, which="both")
    axes[0].legend(fontsize=6.5)
    cap = ctx.caption(fig, sum(data.values(), []),
                      "theoretical strong scaling of the 1D solver, 2048 elements, p = 1..4: "
                      "the paper's eq. 23 (solid) and the exact counts of the solver's tree "
                      "(dashed), from feaccel-bench iga-direct --cost",
                      "theoretical curves only (no values printed); speedup saturates at "
                      "O(N/log N) as P grows")
    ctx.save(fig, f, ["p", "P", "paper_cp_flops", "paper_speedup", "paper_efficiency",
                      "exact_cp_flops", "exact_speedup", "exact_efficiency"], rows, cap)


def draw_fronts(ctx, fig):
    """Table 1: the front sizes per level (largest q, r over the level's nodes)."""
    rows = []
    recs_all = []
    cases = [(1, p, (p + 1) * 16) for p in pick(ctx.mode, P1D, P1D, (2,))] + \
            [(2, p, (p + 1) * 8) for p in pick(ctx.mode, P2D, P2D, (2,))]
    for dim, p, n in cases:
        recs = ctx.run(["iga-direct", "--dim", dim, "--p", p, "--n", n, "--levels", "--no-cholmod",
                        "--gemm-n", 256], reps=1)
        recs_all += recs
        for r in recs:
            prm = r["params"]
            if "level" not in prm:
                continue
            L = prm["level"]
            if dim == 1:
                paper_r = 2 * p
                paper_q = 1 if L == 0 else p
            else:
                # 4-way merge i = L/2 (the solver splits it in a horizontal and a vertical level)
                if L == 0:
                    paper_q, paper_r = 1, 4 * p * (p + 1)
                elif L % 2 == 0:
                    a = (p + 1) * 2 ** (L // 2 - 1)
                    paper_q, paper_r = 4 * a * p - 3 * p * p, 8 * a * p
                else:
                    paper_q, paper_r = "", ""
            rows.append([dim, p, n, L, prm["nodes"], prm["q_max"], prm["r_max"], paper_q, paper_r])
    header = ["dim", "p", "n", "level", "nodes", "q max", "r max", "q(i) interior", "r(i) interior"]
    cap = ctx.caption(fig, recs_all,
                      "eliminated (q) and passed-up (r) unknowns per tree level: the largest over "
                      "the level's fronts (boundary patches eliminate more), against the interior "
                      "counts behind Table 1 (1D: q = 1 then p, r = 2p; 2D: q(0) = 1, "
                      "r(0) = 4p(p+1), q(i) = 4ap − 3p², r(i) = 8ap, a = (p+1)2^(i−1); the solver "
                      "splits each 2D merge into two levels, the interior counts are for the even "
                      "ones; the root has r = 0)",
                      "Table 1 gives orders only: IGA q(0) = O(1), r(0) = O(p^d), q(i), r(i) = "
                      "O(2^((d−1)i) p^d)")
    ctx.table(fig, header, rows, cap, "Front sizes per level (Table 1)", width=9)


# ------------------------------------------------------------------ registry
def gpu_machines():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return sorted(os.path.basename(os.path.dirname(p)) for p in
                  glob.glob(os.path.join(here, "docs", "figures", "data", "*", "*.jsonl")))


def _figures():
    figs = [Figure("mf-table1-fronts", "mf", "Table 1", draw_fronts),
            Figure("mf-fig09-11-strong-scaling", "mf", "Figs. 9–11", draw_strong_scaling)]
    srcs = [(Source(), "", False)] + [(Source(m), "-" + m, True) for m in
                                      dict.fromkeys(gpu_machines())]
    for src, sfx, gpu in srcs:
        figs += [
            Figure("mf-fig03-1d-time-memory" + sfx, "mf", "Fig. 3", draw_fig3(src), gpu),
            Figure("mf-fig04-07-1d-vs-cholmod" + sfx, "mf", "Figs. 4–7", draw_vs_cholmod(src, 1), gpu),
            Figure("mf-fig12-15-2d-time-memory" + sfx, "mf", "Figs. 12–15", draw_2d_time(src), gpu),
            Figure("mf-fig16-gflops" + sfx, "mf", "Fig. 16",
                   draw_metric(src, "gflops", "GFLOP/s (counted flops / factor time)",
                               "2D GFLOP/s against N",
                               "≈ 10 GFLOP/s on the GTX 780, ≈ 6 % of its 166 GFLOP/s DP peak",
                               loglog=False, peer="gflops"), gpu),
            Figure("mf-fig17-memory" + sfx, "mf", "Fig. 17",
                   draw_metric(src, "factor_bytes", "factor memory [MiB]",
                               "2D factor memory against N, log-log",
                               "no values printed; O(p² N log(N/p)) in the model",
                               scale=2.0**-20, peer="factor_bytes"), gpu),
            Figure("mf-fig18-20-phases" + sfx, "mf", "Figs. 18–20", draw_phases(src), gpu),
            Figure("mf-fig21-23-2d-vs-cholmod" + sfx, "mf", "Figs. 21–23", draw_vs_cholmod(src, 2), gpu),
            Figure("mf-fig24-26-exponents" + sfx, "mf", "Figs. 24–26", draw_exponents(src), gpu),
            Figure("mf-fig27-time-over-p2" + sfx, "mf", "Fig. 27", draw_time_p2(src), gpu),
        ]
    return figs


FIGURES = _figures()
