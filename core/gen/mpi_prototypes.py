"""The MPI library's prototypes and llamp's call table, read for the generators of MPI wrappers:
tracer/gen_wrappers.py (the tracer's recording wrappers) and tools/loggp/gen_mpi_timing.py (the
runtime timer's time-inside-MPI wrappers). One parser, so both wrap the same calls with the same
signatures.
"""
import os
import re
import sys

# What each group of untraced calls is, and its calls (those the MPI library lacks are skipped).
UNTRACED = {
    "one-sided communication": [
        "Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap", "Rput", "Rget",
        "Raccumulate", "Rget_accumulate", "Win_fence", "Win_start", "Win_complete", "Win_post", "Win_wait",
        "Win_test", "Win_lock", "Win_unlock", "Win_lock_all", "Win_unlock_all", "Win_flush", "Win_flush_all",
        "Win_flush_local", "Win_flush_local_all", "Win_sync"],
    "partitioned communication": ["Psend_init", "Precv_init", "Pready", "Pready_range", "Pready_list", "Parrived"],
}

PROTO_RE = re.compile(r"\bint\s+MPI_(\w+)\s*\(([^;]*?)\)\s*(?:MPICH_\w+\s*(?:\([^)]*\))?\s*)*;", re.S)
INCLUDE_RE = re.compile(r'#\s*include\s*[<"]([\w.]+)[>"]')


def read_calls(def_path):
    calls = []
    with open(def_path) as f:
        text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    for m in re.finditer(r"LLAMP_CALL\(\s*(\w+)\s*,\s*(\w+)\s*\)", text):
        calls.append((m.group(1), m.group(2)))
    if not calls:
        sys.exit(f"{def_path}: no LLAMP_CALL lines found")
    return calls


def read_prototypes(mpi_h):
    """Prototypes from mpi.h and the headers it includes that live beside it (mpi_proto.h)."""
    folder = os.path.dirname(mpi_h)
    protos, seen, pending = {}, set(), [mpi_h]
    while pending:
        path = pending.pop()
        if path in seen:
            continue
        seen.add(path)
        with open(path) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
        for inc in INCLUDE_RE.findall(text):
            candidate = os.path.join(folder, inc)
            if os.path.exists(candidate) and not inc.startswith("mpicxx"):
                pending.append(candidate)
        for m in PROTO_RE.finditer(text):
            protos.setdefault(m.group(1), " ".join(m.group(2).split()))
    return protos


def parse_params(text, where):
    """'const void *buf, int count' -> [(decl, name, type_without_name)]."""
    if text.strip() in ("", "void"):
        return []
    out = []
    for decl in (p.strip() for p in text.split(",")):
        if decl == "...":
            out.append((decl, "...", "..."))
            continue
        m = re.match(r"^(.*?)(\w+)\s*((?:\[\s*\w*\s*\])*)$", decl)
        if not m:
            sys.exit(f"{where}: cannot parse parameter '{decl}'")
        out.append((decl, m.group(2), (m.group(1) + m.group(3)).strip()))
    return out


def untraced_calls(protos):
    """[(name, what)] for the counted-only wrappers, in a stable order: the untraced calls and
    their large-count variants."""
    out = []
    for what, names in UNTRACED.items():
        out += [(n, what) for n in names if n in protos]
        out += [(n + "_c", what) for n in names if n + "_c" in protos]
    return out


def write_generated(path, parts):
    """Writes the generated file whole or not at all: a build stopped midway leaves no half file
    that make would take as up to date."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(parts))
    os.replace(tmp, path)
