#!/usr/bin/env python3
"""Generates the tracer's MPI wrappers (Caliper wrap.py style).

Inputs:  core/include/llamp/mpi_calls.def  -- which calls, and their family
         the MPI library's mpi.h (+ the headers it includes from its own folder) -- the prototypes
Output:  one C++ file with one small wrapper per call.

Each wrapper is stamped from its family's template: copy the arguments into the family's typed
argument struct (tracer/src/family_args.hpp), take the start timestamp, call PMPI_<name>, take the
end timestamp, and hand everything to the family's ONE hand-written recording routine
(tracer/src/record_*.cpp). Nothing about what gets recorded lives here: only plumbing.

Every parameter of every traced call must be mapped (to a struct field, or explicitly ignored)
so that an MPI header with renamed parameters fails here, loudly, instead of silently tracing less.

The MPI 4.0 large-count variant of a traced call (MPI_Send_c, ...) gets the same wrapper, recorded
as the call itself with the large-count flag. Calls llamp cannot model (UNTRACED in
core/gen/mpi_prototypes.py, and their "_c" variants) get a wrapper that only counts them: the rank
writes untraced-NNNNN.json at MPI_Finalize and schedgen refuses to build a graph that would lack
their communication.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "core", "gen"))
from mpi_prototypes import parse_params, read_calls, read_prototypes, untraced_calls, write_generated  # noqa: E402

# family -> (struct, recorder, gate, parameter map)
#   gate "tracing": the wrapper only forwards while tracing is off or paused.
#   gate "always":  the recorder runs even when paused (setup, communicator ids, shutdown).
#   parameter map: name -> struct field, list of fields, or None (not needed for the trace).
P2P = {"buf": None, "count": "count", "datatype": "datatype", "dest": "peer", "source": "peer",
       "tag": "tag", "comm": "comm", "request": "request", "status": "status"}
COLL = {"sendbuf": "sendbuf", "recvbuf": "recvbuf", "buffer": None, "sendcount": "sendcount",
        "recvcount": "recvcount", "count": "count", "sendtype": "sendtype", "recvtype": "recvtype",
        "datatype": "datatype", "sendcounts": "sendcounts", "recvcounts": "recvcounts",
        "sendtypes": "sendtypes", "recvtypes": "recvtypes", "displs": None, "sdispls": None,
        "rdispls": None, "op": None, "root": "root", "comm": "comm", "request": "request"}
COMM_CREATE = {"comm": "parent", "comm_old": "parent", "local_comm": "parent", "intercomm": "parent",
               "newcomm": "newcomm", "comm_cart": "newcomm", "comm_graph": "newcomm",
               "comm_dist_graph": "newcomm", "newintercomm": "newcomm", "newintracomm": "newcomm",
               "color": "color", "request": "request", "info": None, "key": None,
               "split_type": None, "group": None, "tag": None, "ndims": None, "dims": None,
               "periods": None, "reorder": None, "remain_dims": None, "nnodes": None, "indx": None,
               "edges": None, "n": None, "sources": None, "degrees": None, "destinations": None,
               "weights": None, "indegree": None, "sourceweights": None, "outdegree": None,
               "destweights": None, "local_leader": None, "peer_comm": None, "remote_leader": None,
               "high": None}
FAMILIES = {
    "init": ("InitArgs", "record_init", "always",
             {"argc": None, "argv": None, "required": "required", "provided": "provided"}),
    "finalize": ("NoArgs", "record_finalize", "always", {}),
    "pcontrol": ("PcontrolArgs", "record_pcontrol", "always", {"level": "level"}),
    "abort": ("AbortArgs", "record_abort", "always", {"comm": "comm", "errorcode": "errorcode"}),
    "send": ("P2PArgs", "record_send", "tracing", P2P),
    "recv": ("P2PArgs", "record_recv", "tracing", P2P),
    "sendrecv": ("SendrecvArgs", "record_sendrecv", "tracing",
                 {"sendbuf": None, "recvbuf": None, "buf": None,
                  "sendcount": "sendcount", "recvcount": "recvcount", "count": ["sendcount", "recvcount"],
                  "sendtype": "sendtype", "recvtype": "recvtype", "datatype": ["sendtype", "recvtype"],
                  "dest": "dest", "sendtag": "sendtag", "source": "source", "recvtag": "recvtag",
                  "comm": "comm", "status": "status"}),
    "isend": ("P2PArgs", "record_isend", "tracing", P2P),
    "irecv": ("P2PArgs", "record_irecv", "tracing", P2P),
    "send_init": ("P2PArgs", "record_send_init", "tracing", P2P),
    "recv_init": ("P2PArgs", "record_recv_init", "tracing", P2P),
    "start": ("StartArgs", "record_start", "tracing",
              {"request": "requests", "count": "count", "array_of_requests": "requests"}),
    "request_free": ("RequestArgs", "record_request_free", "tracing", {"request": "request"}),
    "cancel": ("RequestArgs", "record_cancel", "tracing", {"request": "request"}),
    "probe": ("ProbeArgs", "record_probe", "tracing",
              {"source": "source", "tag": "tag", "comm": "comm", "flag": "flag", "status": "status"}),
    "mprobe": ("ProbeArgs", "record_mprobe", "tracing",
               {"source": "source", "tag": "tag", "comm": "comm", "flag": "flag", "message": "message",
                "status": "status"}),
    "mrecv": ("MrecvArgs", "record_mrecv", "tracing",
              {"buf": None, "count": "count", "datatype": "datatype", "message": "message",
               "request": "request", "status": "status"}),
    "completion": ("CompletionArgs", "record_completion", "tracing",
                   {"request": "requests", "array_of_requests": "requests", "count": "count",
                    "incount": "count", "indx": "index", "flag": "flag", "outcount": "outcount",
                    "array_of_indices": "indices", "status": "statuses", "array_of_statuses": "statuses"}),
    "collective": ("CollArgs", "record_collective", "tracing", COLL),
    "icollective": ("CollArgs", "record_icollective", "tracing", COLL),
    "collective_init": ("CollArgs", "record_collective_init", "tracing", dict(COLL, info=None)),
    "comm_create": ("CommCreateArgs", "record_comm_create", "always", COMM_CREATE),
    "comm_free": ("CommFreeArgs", "record_comm_free", "always", {"comm": "comm"}),
}
# Families whose recorder needs a look at the arguments before PMPI runs (request handles that
# the call will overwrite with MPI_REQUEST_NULL, Abort's flush, ...): <recorder>_before(call, a).
BEFORE = {"abort", "request_free", "cancel", "mrecv", "completion", "comm_free"}
# Families whose event is started before PMPI runs, from the arguments alone: <prepare>(call, t0, a).
# The tracer's work between the MPI library's return and the application's next instruction is what
# shifts the application's timing against its peers (docs/tracer.md, "Stores after the call").
PREPARE = {"send": "prepare_p2p", "recv": "prepare_p2p", "isend": "prepare_p2p", "irecv": "prepare_p2p",
           "send_init": "prepare_p2p", "recv_init": "prepare_p2p", "collective": "prepare_collective",
           "icollective": "prepare_collective", "collective_init": "prepare_collective"}
# Wrappers with everything they call inlined (LTO): the recording after the call then pushes no
# registers of its own, and a collective's fill_collective folds to its call's case. The slow paths
# they would otherwise inline (the writer's, the vectors', registering a communicator) are
# [[gnu::noinline]] where they are defined.
FLATTEN = set(PREPARE) | {"completion"}

def wrapper(name, family, params, where, large_count=False):
    """The wrapper of MPI_<name>; with large_count, of MPI_<name>_c, recorded as MPI_<name> with the
    large-count flag (its count arrays go to the struct's *_c fields)."""
    struct, recorder, gate, pmap = FAMILIES[family]
    symbol = name + "_c" if large_count else name
    raw_args = ", ".join(p[1] for p in params if p[1] != "...")
    decls = ", ".join(p[0] for p in params) or "void"
    pre, fill, args = [], [], []
    count_param = next((p[1] for p in params if p[1] in ("count", "incount")), None)
    for decl, pname, ptype in params:
        if pname == "...":
            continue
        if pname not in pmap:
            sys.exit(f"{where}: parameter '{pname}' of MPI_{symbol} is not mapped for family '{family}' "
                     f"(add it to gen_wrappers.py)")
        arg = pname
        if "MPI_Status" in ptype and pname == "status":
            # Substitute our own status for MPI_STATUS_IGNORE: receives must record what arrived.
            pre.append(f"  MPI_Status llamp_own_status;\n"
                       f"  MPI_Status* const llamp_status = {pname} == MPI_STATUS_IGNORE ? &llamp_own_status : {pname};\n"
                       f"  a.status_ignored = {pname} == MPI_STATUS_IGNORE;")
            arg = "llamp_status"
        elif "MPI_Status" in ptype:
            if count_param is None:
                sys.exit(f"{where}: status array of MPI_{name} without a count parameter")
            pre.append(f"  MPI_Status* const llamp_status = ::llamp::tracer::statuses_or({pname}, {count_param});\n"
                       f"  a.status_ignored = {pname} == MPI_STATUSES_IGNORE;")
            arg = "llamp_status"
        args.append(arg)
        fields = pmap[pname]
        for field in ([fields] if isinstance(fields, str) else fields or []):
            if large_count and field in ("sendcounts", "recvcounts") and "MPI_Count" in ptype:
                field += "_c"
            fill.append(f"  a.{field} = {arg};")
    call = f"::llamp::trace::Call::{name}"
    fast = (f"  if (!::llamp::tracer::tracing()) return PMPI_{symbol}({raw_args});\n"
            if gate == "tracing" else "")
    before = f"  LLAMP_TRACER_GUARD(::llamp::tracer::{recorder}_before({call}, a));\n" if family in BEFORE else ""
    if family in PREPARE:
        before += f"  LLAMP_TRACER_GUARD(::llamp::tracer::{PREPARE[family]}({call}, t0, a));\n"
    mark = "  ::llamp::tracer::thread_state().large_count = true;\n" if large_count else ""
    body = "\n".join(x for x in ["\n".join(pre), "\n".join(fill)] if x)
    # t0 is taken before the tracer's own work for the call and the event's end is stamped when
    # it is encoded (runtime.cpp, emit), so the gaps between calls - the computation schedgen
    # models - hold no tracer time.
    attrs = "__attribute__((flatten)) " if family in FLATTEN else ""
    return (f"extern \"C\" LLAMP_TRACER_EXPORT {attrs}int MPI_{symbol}({decls}) {{\n"
            f"{fast}"
            f"  const uint64_t t0 = ::llamp::tracer::call_begin();\n"
            f"  ::llamp::tracer::{struct} a{{}};\n"
            f"{body}\n"
            f"{mark}"
            f"{before}"
            f"  const int rc = PMPI_{symbol}({', '.join(args)});\n"
            f"  const uint64_t t1 = ::llamp::tracer::call_end();\n"
            f"  LLAMP_TRACER_GUARD(::llamp::tracer::{recorder}({call}, t0, t1, rc, a));\n"
            f"  return rc;\n"
            f"}}\n")


def untraced_wrapper(index, name, params, where):
    raw_args = ", ".join(p[1] for p in params if p[1] != "...")
    decls = ", ".join(p[0] for p in params) or "void"
    if any(p[1] == "..." for p in params):
        sys.exit(f"{where}: variadic MPI_{name} cannot be forwarded")
    return (f"extern \"C\" LLAMP_TRACER_EXPORT int MPI_{name}({decls}) {{\n"
            f"  ::llamp::tracer::count_untraced({index});\n"
            f"  return PMPI_{name}({raw_args});\n"
            f"}}\n")


def untraced_table(calls):
    rows = "\n".join(f"    {{\"MPI_{n}\", \"{w}\"}}," for n, w in calls)
    return ("namespace llamp::tracer {\n"
            f"const UntracedName kUntracedNames[] = {{\n{rows}\n}};\n"
            f"const size_t kNumUntraced = {len(calls)};\n"
            f"std::atomic<uint64_t> g_untraced_counts[{max(len(calls), 1)}];\n"
            "}  // namespace llamp::tracer\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", required=True, help="mpi_calls.def")
    ap.add_argument("--mpi-header", required=True, help="the MPI library's mpi.h")
    ap.add_argument("--out", required=True)
    opts = ap.parse_args()

    calls = read_calls(opts.calls)
    protos = read_prototypes(opts.mpi_header)
    parts = [
        "// GENERATED by tracer/gen_wrappers.py from core/include/llamp/mpi_calls.def and\n"
        f"// {opts.mpi_header}. Do not edit: change the generator or the recorders.\n",
        "#include \"wrapper_support.hpp\"\n",
    ]
    for name, family in calls:
        if family not in FAMILIES:
            sys.exit(f"{opts.calls}: call {name} has family '{family}' that gen_wrappers.py has no template for")
        if name not in protos:
            sys.exit(f"{opts.mpi_header}: no prototype for MPI_{name} (needed by {opts.calls})")
        where = f"{opts.mpi_header}: MPI_{name}"
        parts.append(wrapper(name, family, parse_params(protos[name], where), where))
        if name + "_c" in protos:  # MPI 4.0's large-count variant: the same event, flagged
            where = f"{opts.mpi_header}: MPI_{name}_c"
            parts.append(wrapper(name, family, parse_params(protos[name + "_c"], where), where, large_count=True))
    untraced = untraced_calls(protos)
    parts.append(untraced_table(untraced))
    for i, (name, _) in enumerate(untraced):
        where = f"{opts.mpi_header}: MPI_{name}"
        parts.append(untraced_wrapper(i, name, parse_params(protos[name], where), where))
    write_generated(opts.out, parts)


if __name__ == "__main__":
    main()
