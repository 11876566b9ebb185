"""The facts of each fork hazard (model.report.Hazard), one record per kind
(model.kinds.HazardKind) and variant, the finding of the kind it is: what the
rule concluded from (analysis.forks, and a tree's analysis.tree_forks), and
what render.forks words its evidence and advice from.  `FACTS` names the
record of every (kind, variant).  They are not in the report's JSON (its
`evidence` is their sentence); a tree's JSON gives the processes a hazard
spans (`processes`) and, for a lock a parent thread references, those
references (each ParentThread's `references`).

Every record has `forked_by` (model.kinds.Forker: who forked the process, for
the advice; None when not asked) and `processes` (a tree's hazard: the PIDs it
spans, the fork child first; None for a process's own).  The entries they
hold are records too: the fork facts' own (model.fork_facts: an InternalLock,
a ThreadDescriptor, a BigContainer) as the analysis read them, and below the
parent's threads a tree's hazard names, the gRPC calls a child waits in and
the memory of a parent's fork children; to_data() gives each as the dict it
has always been, its keys in the same order.  A smaps_rollup stays the
kernel's table of sizes by name ({"Rss": kB, ...}), as model.fork_facts
keeps it.  Facts given as a dict (data written before these records, or
partial: every field of the facts has a default, as every fork fact may be
missing; an entry below the analysis always wrote whole) are read by
`facts_from_data`, their entries into their records."""
from __future__ import annotations

from pyhang.model.fork_facts import BigContainer, InternalLock, ThreadDescriptor
from pyhang.model.kinds import HazardKind
from pyhang.model.record import field, from_data, record
from pyhang.model.references import ObjectPath
from pyhang.model.waits import CodeLine


# --- the entries of the facts

@record
class ParentThread:
    """A thread of the parent a tree's hazard names (its ThreadReport, as a
    sentence names it): its LWP, gdb's number, the kernel's and Python's
    names; for a lock the parent's threads reference (parent-reference), the
    innermost frame that references it (left out for the others)."""
    tid: int
    num: int
    name: str | None = None
    python_name: str | None = None
    references: CodeLine | None = None

    __optional__ = {"references": lambda r: r.references is None}
    __nested__ = {"references": CodeLine}


@record
class GrpcCall:
    """A thread of a fork child waiting in a gRPC call, at its innermost frame in gRPC's package."""
    tid: int
    function: str
    file: str
    line: int


@record
class ChildMemory:
    """A fork child's memory (its smaps_rollup), in kB: private dirty (copied or written since fork), shared
    (clean and dirty) and resident."""
    pid: int
    private_dirty_kb: int
    shared_kb: int
    rss_kb: int


# --- the facts of each kind and variant


@record
class OwnerGoneLockFacts:
    """orphaned-lock, owner-gone: a lock whose recorded owner is no thread of this process."""
    thread: int = 0                      # the waiter
    kind: str = ""                       # model.kinds.WaitKind
    address: int | None = None
    library: str | None = None
    gone: list[int] = field(default_factory=list)   # the owners' TIDs, gone; [] a pthread_t alone
    internal: InternalLock | None = None   # glibc's internal lock at that address
    child: bool = False                  # this is a fork child that did not exec
    owner_ident: int | None = None       # no owner TID: the pthread_t the lock records
    descriptor: ThreadDescriptor | None = None   # that pthread_t's descriptor, of a parent thread fork did not copy
    parent_pid: int | None = None        # the parent's threads were read: its PID
    in_parent: list[int] | None = None   # ... and which of the gone owners are threads of it
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"internal": InternalLock, "descriptor": ThreadDescriptor}


@record
class InternalLockFacts:
    """orphaned-lock, internal-lock: glibc's internal lock, which fork does not reset, records no owner."""
    thread: int = 0
    internal: InternalLock | None = None
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"internal": InternalLock}


@record
class PythonLockFacts:
    """orphaned-lock, python-lock: a threading.Lock no thread of this fork child references."""
    thread: int = 0
    kind: str = ""
    address: int | None = None
    name: ObjectPath | None = None       # the variable that reaches it
    lost: int = 0                        # descriptors of parent threads fork did not copy
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"name": ObjectPath}


@record
class ParentThreadLockFacts:
    """orphaned-lock, parent-thread (a tree's): the owner a child's lock records is a thread of its parent."""
    thread: int = 0
    kind: str = ""
    address: int | None = None
    library: str | None = None
    internal: InternalLock | None = None
    parent_pid: int = 0
    parent_threads: list[ParentThread] = field(default_factory=list)   # the owners
    parent_comm: str | None = None
    processes: list[int] | None = None
    forked_by: str | None = None

    __nested__ = {"internal": InternalLock, "parent_threads": ParentThread}


@record
class ParentOwnerFacts:
    """orphaned-lock, parent-owner (a tree's): the same RLock in the parent is owned by that pthread_t, a
    parent thread."""
    thread: int = 0
    kind: str = ""
    address: int | None = None
    owner_ident: int | None = None
    type: str = ""                       # threading's lock type (LockObject.type_name)
    parent_pid: int = 0
    parent_comm: str | None = None
    parent_threads: list[ParentThread] = field(default_factory=list)   # the owner
    processes: list[int] | None = None
    forked_by: str | None = None

    __nested__ = {"parent_threads": ParentThread}


@record
class ParentReferenceFacts:
    """orphaned-lock, parent-reference (a tree's): the same Lock is locked in the parent, which threads
    there reference."""
    thread: int = 0
    kind: str = ""
    address: int | None = None
    type: str = ""
    refcount: int | None = None
    parent_pid: int = 0
    parent_comm: str | None = None
    parent_threads: list[ParentThread] = field(default_factory=list)   # those referencing it, with their frame
    processes: list[int] | None = None
    forked_by: str | None = None

    __nested__ = {"parent_threads": ParentThread}


@record
class OpenmpFacts:
    """openmp-after-fork: libgomp is loaded, its pool started before fork."""
    library: str = ""
    pool: int = 0                        # pool threads that ran in the parent
    pool_example: ThreadDescriptor | None = None   # one of their descriptors
    inside: list[int] = field(default_factory=list) # threads blocked inside libgomp
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"pool_example": ThreadDescriptor}


@record
class ParentPoolFacts:
    """openmp-after-fork, parent-pool (a tree's): the child waits for the pool that lives in its parent."""
    inside: list[int] = field(default_factory=list)
    library: str | None = None
    parent_pid: int = 0
    parent_comm: str | None = None
    parent_threads: list[ParentThread] = field(default_factory=list)   # the pool's threads there
    pool_in_child: int = 0               # their descriptors in the child's memory
    processes: list[int] | None = None
    forked_by: str | None = None

    __nested__ = {"parent_threads": ParentThread}


@record
class GrpcFacts:
    """grpc-after-fork: gRPC's threads started before fork."""
    library: str = ""
    pool: int = 0
    pool_example: ThreadDescriptor | None = None
    inside: list[int] = field(default_factory=list) # threads in a gRPC call
    calls: list[GrpcCall] = field(default_factory=list)   # ... and where
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"pool_example": ThreadDescriptor, "calls": GrpcCall}


@record
class CudaFacts:
    """cuda-after-fork: CUDA initialised before fork."""
    library: str | None = None
    drivers: int = 0                     # the driver's threads that ran in the parent
    driver_example: ThreadDescriptor | None = None
    flags: list[str] = field(default_factory=list) # torch.cuda's flags that say so
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"driver_example": ThreadDescriptor}


@record
class ThreadsAtForkFacts:
    """threads-at-fork: the parent had threads when it forked."""
    lost: list[ThreadDescriptor] = field(default_factory=list) # descriptors of parent threads fork did not copy
    parent_pid: int | None = None
    parent_threads: int = 0              # the parent's threads now (live)
    parent_thread_names: list[str] = field(default_factory=list)
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"lost": ThreadDescriptor}


@record
class StartMethodParentFacts:
    """fork-start-method, parent: multiprocessing forks a process that has threads."""
    method: str = ""
    fixed: bool = False                  # set explicitly, not the platform default
    threads: int = 0
    gomp: bool = False                   # libgomp is loaded
    forked_by: str | None = None
    processes: list[int] | None = None


@record
class StartMethodChildFacts:
    """fork-start-method, child: multiprocessing started this child with the fork start method."""
    process_type: str = ""
    forked_by: str | None = None
    processes: list[int] | None = None


@record
class CowFacts:
    """cow-refcount: this fork child reads large builtin containers inherited from its parent."""
    smaps_rollup: dict[str, int] | None = None   # the child's, kB by the kernel's name (ProcessFacts')
    containers: list[BigContainer] = field(default_factory=list)   # the largest it reads, the first five
    forked_by: str | None = None
    processes: list[int] | None = None

    __nested__ = {"containers": BigContainer}


@record
class CowChildrenFacts:
    """cow-refcount, children (a tree's): the parent's fork children copying its memory."""
    children: list[ChildMemory] = field(default_factory=list) # the most private dirty first
    children_count: int = 0
    reading: list[int] = field(default_factory=list)
    private_dirty_kb: int = 0
    containers: list[BigContainer] = field(default_factory=list)   # the children's own hazards', the largest
    processes: list[int] | None = None
    forked_by: str | None = None

    __nested__ = {"children": ChildMemory, "containers": BigContainer}


# The facts record of every hazard kind and variant (python/tests/test_fork_words.py finds none missing).
FACTS = {
    (HazardKind.ORPHANED_LOCK, "owner-gone"): OwnerGoneLockFacts,
    (HazardKind.ORPHANED_LOCK, "internal-lock"): InternalLockFacts,
    (HazardKind.ORPHANED_LOCK, "python-lock"): PythonLockFacts,
    (HazardKind.ORPHANED_LOCK, "parent-thread"): ParentThreadLockFacts,
    (HazardKind.ORPHANED_LOCK, "parent-owner"): ParentOwnerFacts,
    (HazardKind.ORPHANED_LOCK, "parent-reference"): ParentReferenceFacts,
    (HazardKind.OPENMP_AFTER_FORK, ""): OpenmpFacts,
    (HazardKind.OPENMP_AFTER_FORK, "parent-pool"): ParentPoolFacts,
    (HazardKind.GRPC_AFTER_FORK, ""): GrpcFacts,
    (HazardKind.CUDA_AFTER_FORK, ""): CudaFacts,
    (HazardKind.THREADS_AT_FORK, ""): ThreadsAtForkFacts,
    (HazardKind.FORK_START_METHOD, "parent"): StartMethodParentFacts,
    (HazardKind.FORK_START_METHOD, "child"): StartMethodChildFacts,
    (HazardKind.COW_REFCOUNT, ""): CowFacts,
    (HazardKind.COW_REFCOUNT, "children"): CowChildrenFacts,
}


@record
class OtherHazardFacts:
    """The facts of a kind or variant this pyhang does not know, as they were given."""
    given: dict = field(default_factory=dict)
    forked_by: str | None = None
    processes: list[int] | None = None


def facts_from_data(kind, variant, data):
    """The facts record of a hazard of `kind` and `variant` from a dict (an older pyhang's data, or a partial
    one: every field has a default); a kind or variant this pyhang does not know keeps its dict in an
    OtherHazardFacts."""
    cls = FACTS.get((kind, variant))
    if not isinstance(data, dict):
        return data
    if cls is None:
        return OtherHazardFacts(given=dict(data), forked_by=data.get("forked_by"), processes=data.get("processes"))
    return from_data(cls, data)
