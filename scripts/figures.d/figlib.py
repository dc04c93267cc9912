"""What every figure of scripts/figures shares: running a bench case once per mode and
caching its JSON lines, reading the GPU records on file, and writing a figure or table
as PNG + CSV + a caption (.md) that names the machine, the date, the paper's figure or
table and the paper's value."""
import datetime
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

DPI = 100
PAPERS = {
    "mf": "IGA multifrontal paper (Woźniak et al. 2014)",
    "th": "Concurrent-assembly and matrix-free thesis (Paper I: IPDPS 2011; Paper II: Euro-Par 2014)",
    "ph": "Prehandled Schur-complement paper (Ruda et al. 2022)",
}
SHORT = {"mf": "IGA multifrontal paper", "th": "Assembly/matrix-free thesis", "ph": "Prehandled paper"}


class BenchFailed(Exception):
    pass


class NoData(Exception):
    pass


class Figure:
    """One figure or table: name (the file stem), paper key, the paper's label
    ("Fig. 3", "Table 1"), whether it is drawn from GPU records, and its drawer."""

    def __init__(self, name, paper, label, draw, gpu=False):
        self.name, self.paper, self.label, self._draw, self.gpu = name, paper, label, draw, gpu

    def draw(self, ctx):
        return self._draw(ctx, self)


def pick(mode, quick, full=None, smoke=None):
    """The value of the current mode: quick is the default of the others."""
    return {"quick": quick, "full": quick if full is None else full,
            "smoke": quick if smoke is None else smoke}[mode]


class Context:
    def __init__(self, root, mode, out, cache, bench, data, rerun):
        self.root, self.mode, self.out, self.cache, self.data = root, mode, out, cache, data
        self.rerun = rerun
        self._bench = bench
        self.failures = []
        self.failed_keys = set()
        self.bench_seconds = 0.0
        self.captions = {}  # name -> caption (for the index)
        self._gpu = None
        os.makedirs(out, exist_ok=True)
        os.makedirs(cache, exist_ok=True)

    # ------------------------------------------------------------------ bench
    def bench(self):
        if self._bench:
            return self._bench
        cands = sorted(glob.glob(os.path.join(self.root, "build*", "bench", "feaccel-bench")),
                       key=os.path.getmtime, reverse=True)
        preferred = os.path.join(self.root, "build", "bench", "feaccel-bench")
        if os.path.exists(preferred):
            cands.insert(0, preferred)
        cands = [c for c in cands if os.access(c, os.X_OK)]
        if not cands:
            bdir = os.path.join(self.root, "build-figures", "build")
            print("scripts/figures: no feaccel-bench built; building one in %s" % bdir, flush=True)
            if not os.path.exists(os.path.join(bdir, "build.ninja")):
                subprocess.run(["meson", "setup", bdir, self.root, "-Dpetsc=disabled",
                                "-Dcuda=disabled"], check=True)
            subprocess.run(["meson", "compile", "-C", bdir, "feaccel-bench"], check=True)
            cands = [os.path.join(bdir, "bench", "feaccel-bench")]
        self._bench = cands[0]
        print("scripts/figures: using %s" % os.path.relpath(self._bench, self.root), flush=True)
        return self._bench

    def run(self, args, reps=None, threads=None):
        """JSON records of `feaccel-bench --json [--reps R] [--threads T] ARGS...`,
        from the cache unless --rerun. Raises BenchFailed when the case fails."""
        glob_opts = []
        if reps is not None:
            glob_opts += ["--reps", str(reps)]
        if threads is not None:
            glob_opts += ["--threads", str(threads)]
        argv = glob_opts + [str(a) for a in args]
        key = re.sub(r"[^A-Za-z0-9.,=+-]+", "_", "-".join(a.lstrip("-") for a in
                                                           [str(args[0])] + argv)).strip("_")
        path = os.path.join(self.cache, key + ".jsonl")
        if key in self.failed_keys:
            raise BenchFailed("feaccel-bench %s (failed before)" % " ".join(argv))
        if self.rerun and path not in getattr(self, "_fresh", set()) and os.path.exists(path):
            os.remove(path)
        if not os.path.exists(path):
            cmd = [self.bench(), "--json"] + argv
            print("  running: feaccel-bench --json %s" % " ".join(argv), flush=True)
            t0 = time.time()
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else -1.0
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                rc, out, err = p.returncode, p.stdout, p.stderr
            except OSError as e:
                rc, out, err = 127, "", str(e)
            dt = time.time() - t0
            self.bench_seconds += dt
            print("    %.1f s, rc %d" % (dt, rc), flush=True)
            if rc != 0:
                self.failed_keys.add(key)
                what = "feaccel-bench --json %s: exit %d: %s" % (
                    " ".join(argv), rc, err.strip().splitlines()[-1] if err.strip() else "")
                self.failures.append(what)
                raise BenchFailed(what)
            with open(path + ".tmp", "w") as fh:
                # the run's facts first: what ran, and how busy the machine was
                fh.write(json.dumps({"_meta": {"argv": argv, "loadavg_1min": round(load, 2),
                                               "seconds": round(dt, 2)}}) + "\n")
                fh.write(out)
            os.replace(path + ".tmp", path)
            self._fresh = getattr(self, "_fresh", set()) | {path}
        recs, meta = [], {}
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if line.startswith("{"):
                    r = json.loads(line)
                    if "_meta" in r:
                        meta = r["_meta"]
                    else:
                        recs.append(r)
        for r in recs:
            r["_date"] = datetime.date.fromtimestamp(os.path.getmtime(path)).isoformat()
            r["_load"] = meta.get("loadavg_1min", -1.0)
        return recs

    # -------------------------------------------------------------- GPU data
    def gpu(self, case):
        """{machine folder: [records of case]} from data/<machine>/*.jsonl (GPU records only)."""
        if self._gpu is None:
            self._gpu = {}
            for d in sorted(glob.glob(os.path.join(self.data, "*"))):
                if not os.path.isdir(d):
                    continue
                recs = []
                for f in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
                    date = os.path.basename(f)[:-6]
                    with open(f) as fh:
                        for line in fh:
                            if line.strip().startswith("{"):
                                r = json.loads(line)
                                r["_date"] = date
                                recs.append(r)
                if recs:
                    self._gpu[os.path.basename(d)] = recs
        out = {}
        for m, recs in self._gpu.items():
            sel = [r for r in recs if r.get("case") == case]
            if sel:
                out[m] = sel
        if not out:
            raise NoData("no GPU records of '%s' under %s" % (case, os.path.relpath(self.data)))
        return out

    def check(self, ok, fig, what):
        """A value the paper prints exactly (a count, a closed form) that the figure must match:
        a mismatch is a failure (exit status 1), so the --smoke pass of scripts/run-tests catches it."""
        if not ok:
            self.failures.append("check of %s: %s" % (fig.name, what))
            print("  CHECK FAILED: %s" % what, flush=True)

    # --------------------------------------------------------------- output
    @staticmethod
    def machine_line(recs, gpu=False):
        """'NVIDIA H200 (host: ..., 16 cores), BLAS kernel ...' or the CPU's line."""
        m = next((r["machine"] for r in recs if r.get("machine")), None)
        if not m:
            return "unknown machine"
        blas = m.get("blas", "")
        kern = re.search(r"\(kernels?: ([^)]*)\)", blas)
        blas_short = blas.split(" ")[0] + " " + (blas.split(" ")[1] if " " in blas else "")
        blas_txt = "%s, kernel %s" % (blas_short.strip(), kern.group(1) if kern else "?")
        gpus = sorted({r["machine"].get("gpu") for r in recs if r.get("machine", {}).get("gpu")})
        cpu = "%s, %s cores" % (m.get("cpu_model", "?").strip(), m.get("cores", "?"))
        if gpu and gpus:
            return "%s (host %s; %s)" % (", ".join(gpus), cpu, blas_txt)
        return "%s; %s" % (cpu, blas_txt)

    @staticmethod
    def date_of(recs):
        ds = sorted({r.get("_date") for r in recs if r.get("_date")})
        return ", ".join(ds) if ds else datetime.date.today().isoformat()

    def caption(self, fig, recs, what, paper_value=None, gpu_machine=None, note=None):
        src = ("measured on %s (%s)" % (self.machine_line(recs, gpu=True), self.date_of(recs))
               if gpu_machine else
               "measured on %s, %s, scripts/figures --%s" % (self.machine_line(recs),
                                                             self.date_of(recs), self.mode))
        if recs is None or not recs:
            src = "computed by feaccel-bench (%s)" % datetime.date.today().isoformat()
        loads = [r.get("_load", -1.0) for r in recs or [] if r.get("_load", -1.0) >= 0]
        if loads and not gpu_machine:
            src += "; load average up to %.1f on its %s cores while measuring" % (
                max(loads), next((r["machine"].get("cores") for r in recs if r.get("machine")), "?"))
        label = fig.label[len("thesis "):] if fig.label.startswith("thesis ") else fig.label
        parts = ["%s, %s: %s." % (SHORT[fig.paper], label, what),
                 src[0].upper() + src[1:] + "."]
        if paper_value:
            parts.append("Paper: %s." % paper_value)
        if note:
            parts.append(note)
        return " ".join(parts)

    def save(self, fig, mpl_fig, header, rows, caption, footer=True):
        """Write NAME.png (caption as footer), NAME.csv, NAME.md."""
        name = fig.name
        if mpl_fig is not None and not footer:
            mpl_fig.savefig(os.path.join(self.out, name + ".png"), dpi=DPI)
            plt.close(mpl_fig)
        elif mpl_fig is not None:
            import textwrap
            foot = "\n".join(textwrap.wrap(caption, 150))
            nlines = foot.count("\n") + 1
            h = mpl_fig.get_size_inches()[1]
            mpl_fig.subplots_adjust(bottom=min(0.45, (0.55 + 0.16 * nlines) / h))
            mpl_fig.text(0.01, 0.01, foot, fontsize=6.5, va="bottom", ha="left", wrap=False)
            mpl_fig.savefig(os.path.join(self.out, name + ".png"), dpi=DPI)
            plt.close(mpl_fig)
        with open(os.path.join(self.out, name + ".csv"), "w", newline="") as fh:
            import csv
            w = csv.writer(fh)
            w.writerow(header)
            for r in rows:
                w.writerow([fmt_csv(v) for v in r])
        with open(os.path.join(self.out, name + ".md"), "w") as fh:
            fh.write("# %s (%s)\n\n%s\n\n![%s](%s.png) · data: [%s.csv](%s.csv)\n"
                     % (name, fig.label, caption, name, name, name, name))
        self.captions[name] = caption
        print("  wrote %s.{png,csv,md}" % name, flush=True)

    def table(self, fig, header, rows, caption, title, width=None):
        """A table drawn as a PNG (title, the table, the caption as footer), its CSV and caption."""
        import textwrap
        cells = [[fmt_cell(v) for v in r] for r in rows]
        ncol = len(header)
        w = width or max(6.0, min(13.0, 0.95 * ncol + 1.5))
        foot = "\n".join(textwrap.wrap(caption, int(w * 21)))
        nfoot = foot.count("\n") + 1
        row_h, title_h, foot_h = 0.2, 0.35, 0.12 * nfoot + 0.15
        table_h = row_h * (len(rows) + 1)
        h = title_h + table_h + foot_h
        f = plt.figure(figsize=(w, h))
        ax = f.add_axes([0.01, foot_h / h, 0.98, table_h / h])
        ax.axis("off")
        f.text(0.5, 1 - 0.5 * title_h / h, title, ha="center", va="center", fontsize=9)
        t = ax.table(cellText=cells, colLabels=header, loc="center", cellLoc="right",
                     bbox=[0, 0, 1, 1])
        t.auto_set_font_size(False)
        t.set_fontsize(7)
        f.text(0.01, 0.02 / h, foot, fontsize=6.5, va="bottom", ha="left")
        self.save(fig, f, header, rows, caption, footer=False)

    def write_index(self, figs):
        """docs/figures/README.md: every figure's caption (those drawn in this or an earlier run)."""
        lines = ["# Figures and tables redrawn from the papers",
                 "",
                 "Written by `scripts/figures` (do not edit: it is rewritten on each run). "
                 "The status of every table and figure of the three papers is in "
                 "[docs/seeds.md](../seeds.md). GPU records on file: `data/<machine>/*.jsonl`.",
                 ""]
        for paper in ("mf", "th", "ph"):
            lines += ["## " + PAPERS[paper], ""]
            for f in figs:
                if f.paper != paper:
                    continue
                md = os.path.join(self.out, f.name + ".md")
                if not os.path.exists(md):
                    continue
                cap = self.captions.get(f.name)
                if cap is None:
                    with open(md) as fh:
                        cap = fh.read().split("\n\n")[1].strip()
                lines += ["- [%s](%s.png) (%s): %s" % (f.name, f.name, f.label, cap), ""]
        with open(os.path.join(self.out, "README.md"), "w") as fh:
            fh.write("\n".join(lines))


def fmt_csv(v):
    if isinstance(v, float):
        return "%.6g" % v
    return v


def fmt_cell(v):
    if v is None or v == "":
        return "–"
    if isinstance(v, float):
        if v != v:
            return "–"
        a = abs(v)
        if a == 0:
            return "0"
        if a >= 1e5 or a < 1e-3:
            return "%.3g" % v
        if a >= 100:
            return "%.0f" % v
        return "%.3g" % v
    return str(v)


def new_fig(w=7.0, h=4.2, ncols=1, nrows=1):
    f, axes = plt.subplots(nrows, ncols, figsize=(w, h), squeeze=False)
    f.subplots_adjust(wspace=0.32, hspace=0.4)
    return f, axes.ravel().tolist()


def loglog_slope(xs, ys):
    import math
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return float("nan")
    n = len(pts)
    sx = sum(p[0] for p in pts)
    sy = sum(p[1] for p in pts)
    sxx = sum(p[0] * p[0] for p in pts)
    sxy = sum(p[0] * p[1] for p in pts)
    d = n * sxx - sx * sx
    return (n * sxy - sx * sy) / d if d else float("nan")


def quote(argv):
    return " ".join(shlex.quote(a) for a in argv)
