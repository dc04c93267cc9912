#!/usr/bin/env python3
"""Generate feaccel/_generated.py, the cffi declarations of the public C API.

Run by python/meson.build at build time on the public headers as they are
then, so the binding never holds a hand-copied header that can rot. Starting
from include/feaccel.h it inlines the <feaccel/...> includes once each (as
the preprocessor's include guards would), then keeps what cffi's C parser
takes: typedefs, enums, structs and prototypes. It removes comments,
preprocessor lines and every macro the headers define (FEA_API, FEA_EXPORT,
FEA_NODISCARD, FEA_BEGIN_DECLS, function-like attribute macros) and any
__attribute__((...)). Integer #defines (FEA_VERSION_MAJOR) become cffi
constants. The designated-initializer branch of every FEA_*_INIT macro is
parsed into a Python dict, so the binding fills descriptors with the
header's own defaults.

usage: gen_cdef.py OUTPUT INCLUDE_DIR [INCLUDE_DIR ...]
"""
import json
import re
import sys


def find_header(name, include_dirs):
    for d in include_dirs:
        try:
            with open(f"{d}/{name}", encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            continue
    raise SystemExit(f"gen_cdef.py: {name} not found in {include_dirs}")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def logical_lines(text):
    """Join backslash continuations."""
    return text.replace("\\\n", " ").split("\n")


def inline(name, include_dirs, seen, out_lines, defines):
    if name in seen:
        return
    seen.add(name)
    text = strip_comments(find_header(name, include_dirs))
    in_designated = []  # stack: is this #if branch the designated-initializer one?
    for line in logical_lines(text):
        s = line.strip()
        if not s.startswith("#"):
            out_lines.append(line)
            continue
        m = re.match(r"#\s*include\s*<(feaccel[^>]*)>", s)
        if m:
            inline(m.group(1), include_dirs, seen, out_lines, defines)
            continue
        if re.match(r"#\s*if", s):
            in_designated.append("FEA_DESIGNATED_INITIALIZERS" in s)
        elif re.match(r"#\s*else", s) and in_designated:
            in_designated[-1] = False
        elif re.match(r"#\s*endif", s) and in_designated:
            in_designated.pop()
        m = re.match(r"#\s*define\s+([A-Za-z_]\w*)(\([^)]*\))?\s*(.*)$", s)
        if m:
            macro, params, body = m.group(1), m.group(2), m.group(3).strip()
            # Keep the first (designated) definition of each macro.
            if macro not in defines or (in_designated and in_designated[-1]):
                defines[macro] = (params is not None, body)


def remove_macros(text, defines):
    for macro, (function_like, _) in defines.items():
        if function_like:
            # NAME(...) with balanced parentheses.
            while True:
                m = re.search(r"\b%s\s*\(" % re.escape(macro), text)
                if not m:
                    break
                depth, i = 1, m.end()
                while depth and i < len(text):
                    depth += {"(": 1, ")": -1}.get(text[i], 0)
                    i += 1
                text = text[: m.start()] + text[i:]
        else:
            text = re.sub(r"\b%s\b" % re.escape(macro), "", text)
    while True:
        m = re.search(r"__attribute__\s*\(\(", text)
        if not m:
            break
        depth, i = 2, m.end()
        while depth and i < len(text):
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        text = text[: m.start()] + text[i:]
    text = re.sub(r"\b(__extension__|__restrict|restrict|inline)\b", "", text)
    return re.sub(r"\n\s*\n+", "\n", text)


TOKEN = re.compile(r'\s*(\{|\}|,|=|sizeof\s*\(\s*\w+\s*\)|"(?:[^"\\]|\\.)*"'
                   r'|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[uUlLfF]*|\.[A-Za-z_]\w*|[-+]?\w+)')


def parse_init(body):
    """A designated initializer -> nested dicts/lists of Python values.

    Scalars: numbers, enumerator names (kept as strings, cffi takes them),
    "" strings (bytes), NULL (None) and sizeof(T) (the string "sizeof")."""
    tokens = [t for t in TOKEN.findall(body)]
    pos = [0]

    def value():
        t = tokens[pos[0]]
        if t == "{":
            pos[0] += 1
            items, named = [], {}
            while tokens[pos[0]] != "}":
                if tokens[pos[0]].startswith(".") and not re.match(r"\.\d", tokens[pos[0]]):
                    key = tokens[pos[0]][1:]
                    pos[0] += 2  # .name =
                    named[key] = value()
                else:
                    items.append(value())
                if tokens[pos[0]] == ",":
                    pos[0] += 1
            pos[0] += 1
            return named if named else items
        pos[0] += 1
        if t.startswith("sizeof"):
            return {"__sizeof__": True}
        if t == "NULL":
            return None
        if t.startswith('"'):
            return {"__string__": json.loads(t)}
        num = t.rstrip("uUlLfF") if re.match(r"[-+]?[\d.]", t) else t
        try:
            return int(num, 0)
        except ValueError:
            pass
        try:
            return float(num)
        except ValueError:
            return t  # an enumerator

    return value()


def main(argv):
    out, include_dirs = argv[1], argv[2:]
    lines, defines = [], {}
    inline("feaccel.h", include_dirs, set(), lines, defines)
    decls = remove_macros("\n".join(lines), defines)
    consts = []
    inits = {}
    for macro, (function_like, body) in sorted(defines.items()):
        if function_like:
            continue
        if re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+)[uUlL]*", body):
            consts.append(f"#define {macro} {int(body.rstrip('uUlL'), 0)}")
        elif macro.endswith("_INIT") or macro.endswith("_PAPER"):
            if body.startswith("{") and ".size" in body:
                try:
                    parsed = parse_init(body)
                except (IndexError, KeyError):
                    continue
                m = re.search(r"sizeof\s*\(\s*(\w+)\s*\)", body)
                inits[macro] = {"type": m.group(1) if m else None, "fields": parsed}
        elif re.fullmatch(r'"[^"\\]*"', body):
            consts.append(f"# string {macro} {body}")
    cdef = decls.strip() + "\n" + "\n".join(c for c in consts if c.startswith("#define")) + "\n"
    strings = {m.group(1): m.group(2) for c in consts
               for m in [re.match(r'# string (\w+) "(.*)"', c)] if m}
    # Parse it here when cffi is at hand (pyproject.toml asks for it), so that a
    # header construct cffi cannot take fails the build, not the first import.
    try:
        import cffi
    except ImportError:
        cffi = None
    if cffi is not None:
        try:
            cffi.FFI().cdef(cdef)
        except Exception as e:  # cffi.CDefError and pycparser's ParseError
            raise SystemExit(f"gen_cdef.py: cffi cannot parse the public headers as stripped: {e}")
    with open(out, "w", encoding="utf-8") as f:
        f.write('"""The C API as cffi reads it, generated by python/gen_cdef.py from the\n'
                'public headers at build time. Do not edit."""\n')
        f.write("CDEF = %r\n" % cdef)
        f.write("INITS = %r\n" % inits)
        f.write("STRINGS = %r\n" % strings)


if __name__ == "__main__":
    main(sys.argv)
